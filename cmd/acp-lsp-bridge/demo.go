package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/demoeditor"
)

// demoDoc is the file the demo edits.
const demoDoc = `package main

import "fmt"

func total(prices []int) int {
	sum := 0
	for _, p := range prices {
		sum += p
	}
	return sum
}

func main() {
	fmt.Println(total([]int{1, 2}))
	fmt.Println(total([]int{3, 4}))
	fmt.Println(total([]int{5, 6}))
}
`

// demoStep is one thing the user types, at the first occurrence of at (after it when after is
// set, else replacing it).
type demoStep struct {
	what        string
	at, replace string
	after       bool
	typed       string
}

var demoSteps = []demoStep{
	{what: "rename `sum` to `acc` where it is declared", at: "sum := 0", replace: "sum", typed: "acc"},
	{what: "label the first total it prints", at: "fmt.Println(", after: true, typed: `"total:", `},
}

type demoUI struct {
	w     io.Writer
	color bool
}

func (u demoUI) style(code, s string) string {
	if !u.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (u demoUI) say(format string, args ...any) { fmt.Fprintf(u.w, format+"\n", args...) }

const demoUsage = `acp-lsp-bridge demo: a scripted editing session through the real bridge and its built-in agent.

Usage:
  acp-lsp-bridge demo

It starts this binary as the editor's language server, over real pipes, with its built-in agent
(no model, no network, nothing to set up), opens a small Go file, types and accepts suggestions as
an editor does, and prints what a user would see and what went between the bridge and the agent.
It changes no file of yours. Exit status: 0 when the session went as scripted, 1 when it did not,
2 for a usage error.
`

// runDemo drives a scripted editing session through the real bridge binary and its built-in agent,
// over real pipes, and prints what a user would see.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acp-lsp-bridge demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	if code, done := parseFlags(fs, args, demoUsage, "usage: acp-lsp-bridge demo (it takes no flags or arguments; see --help)", stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acp-lsp-bridge demo: it takes no arguments (got %q); see --help\n", fs.Args())
		return 2
	}
	ui := demoUI{w: stdout, color: isTerminal(stdout)}
	if err := demo(ctx, ui); err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge demo: %v\n", err)
		return 1
	}
	return 0
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// lineDiff shows how the lines around [start, end) change when it becomes text.
func (u demoUI) lineDiff(before string, start, end int, text string) string {
	ls := strings.LastIndexByte(before[:start], '\n') + 1
	le := end + strings.IndexByte(before[end:]+"\n", '\n')
	oldLines := before[ls:le]
	newLines := before[ls:start] + text + before[end:le]
	n := strings.Count(before[:ls], "\n") + 1
	var b strings.Builder
	for i, l := range strings.Split(oldLines, "\n") {
		fmt.Fprintf(&b, "    %s\n", u.style("31", fmt.Sprintf("%3d - %s", n+i, l)))
	}
	for i, l := range strings.Split(newLines, "\n") {
		fmt.Fprintf(&b, "    %s\n", u.style("32", fmt.Sprintf("%3d + %s", n+i, l)))
	}
	return strings.TrimRight(b.String(), "\n")
}

func demo(ctx context.Context, ui demoUI) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "acp-lsp-bridge-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tracePath := filepath.Join(dir, "trace.jsonl")
	// No agent named: the bridge starts its built-in agent, as it does for a new user.
	cmd := exec.CommandContext(ctx, self, "--log-level", "error", "--trace", tracePath)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var bridgeErr bytes.Buffer
	cmd.Stderr = &bridgeErr
	if err := cmd.Start(); err != nil {
		return err
	}
	fail := func(err error) error {
		_ = in.Close()
		_ = cmd.Wait()
		return fmt.Errorf("%w\n%s", err, bridgeErr.String())
	}
	ui.say("%s", ui.style("1", "acp-lsp-bridge demo")+": a scripted editing session through the real bridge binary and its")
	ui.say("built-in agent (rename propagation and repeated edits; no model, no network), over real pipes.\n")

	// The demo's editor keeps the buffer in step with the bridge, in utf-16 positions as most
	// editors use.
	e := demoeditor.Connect(out, in)
	defer e.Close()
	docURI := string(uri.File(filepath.Join(dir, "main.go")))
	if err := e.Initialize(ctx, demoeditor.Init{
		Root: string(uri.File(dir)), ProcessID: os.Getpid(), Encodings: []string{"utf-16"}, ClientName: "demo editor",
	}); err != nil {
		return fail(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err = e.WaitReady(waitCtx)
	cancel()
	if err != nil {
		return fail(fmt.Errorf("the built-in agent did not start: %w", err))
	}
	if err := e.Open(ctx, docURI, "go", demoDoc); err != nil {
		return fail(err)
	}
	ui.say("The editor opens main.go:")
	ui.say("%s\n", ui.style("2", indent(e.Text(docURI))))

	accepted := 0
	for _, step := range demoSteps {
		before := e.Text(docURI)
		at := strings.Index(before, step.at)
		start, end := at, at+len(step.replace)
		if step.after {
			start, end = at+len(step.at), at+len(step.at)
		}
		// Type it one key at a time, as an editor reports keystrokes.
		if end > start {
			if err := e.Edit(ctx, docURI, start, end, ""); err != nil {
				return fail(err)
			}
		}
		cursor := start
		for _, r := range step.typed {
			if err := e.Edit(ctx, docURI, cursor, cursor, string(r)); err != nil {
				return fail(err)
			}
			cursor += len(string(r))
		}
		ui.say("You %s, typing %s:", step.what, ui.style("1", quote(step.typed)))
		ui.say("%s\n", ui.lineDiff(before, start, end, step.typed))
		for {
			at, err := e.PosOf(docURI, cursor)
			if err != nil {
				return fail(err)
			}
			edits, err := e.Suggestions(ctx, docURI, at)
			if err != nil {
				return fail(err)
			}
			if len(edits) == 0 {
				ui.say("The agent has no further suggestion.\n")
				break
			}
			edit := edits[0]
			text := e.Text(docURI)
			s, err := e.OffsetOf(docURI, edit.Range.Start)
			if err != nil {
				return fail(err)
			}
			en, err := e.OffsetOf(docURI, edit.Range.End)
			if err != nil {
				return fail(err)
			}
			ui.say("The agent suggests the next edit, on line %d:", edit.Range.Start.Line+1)
			ui.say("%s", ui.lineDiff(text, s, en, edit.Text))
			// Accept: apply the edit, then run its command, as the editor does.
			if err := e.Edit(ctx, docURI, s, en, edit.Text); err != nil {
				return fail(err)
			}
			if edit.Command == nil {
				return fail(fmt.Errorf("the suggestion has no command to accept it"))
			}
			if err := e.Execute(ctx, *edit.Command); err != nil {
				return fail(err)
			}
			accepted++
			ui.say("You accept it (%s).\n", edit.Command.Command)
			cursor = s + len(edit.Text)
			if accepted > 10 {
				return fail(fmt.Errorf("the agent keeps suggesting"))
			}
		}
	}
	ui.say("The buffer after accepting:")
	ui.say("%s", ui.style("32", indent(e.Text(docURI))))
	if err := e.Shutdown(ctx); err != nil {
		return fail(err)
	}
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("the bridge exited with %v\n%s", err, bridgeErr.String())
	}
	heard, err := agentHeard(tracePath)
	if err != nil {
		return err
	}
	ui.say("\nWhat the agent received, in order (from the bridge's --trace): %s", strings.Join(heard, ", "))
	if slices.ContainsFunc(heard, func(m string) bool { return strings.HasPrefix(m, "nes/reject") }) {
		ui.say("(A nes/reject ends a suggestion that was not taken, saying why: \"ignored\" is one the editor never showed.)")
	}
	return nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// agentHeard lists the methods the bridge sent the agent, from a trace, runs of the same method
// folded into one entry ("document/didChange ×10").
func agentHeard(tracePath string) ([]string, error) {
	f, err := os.Open(tracePath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	last, n := "", 0
	flush := func() {
		switch {
		case n == 1:
			out = append(out, last)
		case n > 1:
			out = append(out, fmt.Sprintf("%s ×%d", last, n))
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec struct {
			Dir     string `json:"dir"`
			Message struct {
				Method string `json:"method"`
				Params struct {
					Reason string `json:"reason"`
				} `json:"params"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Dir != "bridge→agent" || rec.Message.Method == "" {
			continue
		}
		method := rec.Message.Method
		if r := rec.Message.Params.Reason; r != "" {
			// Why a suggestion ended unaccepted: typed over, replaced, never shown.
			method += " (" + r + ")"
		}
		if method == last {
			n++
			continue
		}
		flush()
		last, n = method, 1
	}
	flush()
	return out, sc.Err()
}
