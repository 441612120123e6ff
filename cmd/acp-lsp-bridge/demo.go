package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf16"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"
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

// runDemo drives a scripted editing session through the real bridge binary and its built-in agent,
// over real pipes, and prints what a user would see.
func runDemo(ctx context.Context, stdout, stderr io.Writer) int {
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

// demoEditor is the demo's editor: a buffer kept in step with the bridge, positions in utf-16 as
// most editors use.
type demoEditor struct {
	conn    jsonrpc2.Conn
	uri     string
	text    string
	version int
}

func (e *demoEditor) call(ctx context.Context, method string, params, result any) error {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err := e.conn.Call(cctx, method, params, result)
	return err
}

func utf16Pos(text string, off int) map[string]int {
	line := strings.Count(text[:off], "\n")
	start := strings.LastIndexByte(text[:off], '\n') + 1
	return map[string]int{"line": line, "character": len(utf16.Encode([]rune(text[start:off])))}
}

func utf16Offset(text string, line, char int) int {
	off := 0
	for i := 0; i < line; i++ {
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	units := 0
	for i, r := range text[off:] {
		if units >= char || r == '\n' {
			return off + i
		}
		units += len(utf16.Encode([]rune{r}))
	}
	return len(text)
}

// replace edits the buffer and tells the bridge, as an editor does.
func (e *demoEditor) replace(ctx context.Context, start, end int, text string) error {
	rng := map[string]any{"start": utf16Pos(e.text, start), "end": utf16Pos(e.text, end)}
	e.text = e.text[:start] + text + e.text[end:]
	e.version++
	return e.conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": e.uri, "version": e.version},
		"contentChanges": []any{map[string]any{"range": rng, "text": text}},
	})
}

type demoPos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// demoEdit is a Copilot-style inline edit: what sidekick.nvim and copilot.lua show anywhere in the
// file.
type demoEdit struct {
	Text  string `json:"text"`
	Range struct {
		Start demoPos `json:"start"`
		End   demoPos `json:"end"`
	} `json:"range"`
	Command struct {
		Command   string `json:"command"`
		Arguments []any  `json:"arguments"`
	} `json:"command"`
}

// nextEdit asks the bridge for the next edit at the cursor.
func (e *demoEditor) nextEdit(ctx context.Context, cursor int) (*demoEdit, error) {
	var res struct {
		Edits []demoEdit `json:"edits"`
	}
	if err := e.call(ctx, "textDocument/copilotInlineEdit", map[string]any{
		"textDocument": map[string]any{"uri": e.uri, "version": e.version}, "position": utf16Pos(e.text, cursor),
	}, &res); err != nil {
		return nil, err
	}
	if len(res.Edits) == 0 {
		return nil, nil
	}
	return &res.Edits[0], nil
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

	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(struct {
		io.Reader
		io.WriteCloser
	}{out, in}))
	ready := make(chan struct{})
	var once bool
	conn.Go(ctx, func(_ context.Context, req *jsonrpc2.Request) (any, error) {
		if req.Method() == "window/logMessage" && bytes.Contains(req.Params(), []byte(" is ready (")) && !once {
			once = true
			close(ready)
		}
		return nil, nil
	})
	e := &demoEditor{conn: conn, uri: string(uri.File(filepath.Join(dir, "main.go"))), text: demoDoc, version: 1}
	if err := e.call(ctx, "initialize", map[string]any{
		"processId": os.Getpid(), "rootUri": string(uri.File(dir)),
		"capabilities": map[string]any{"general": map[string]any{"positionEncodings": []string{"utf-16"}}},
		"clientInfo":   map[string]any{"name": "demo editor"},
	}, nil); err != nil {
		return fail(err)
	}
	_ = conn.Notify(ctx, "initialized", map[string]any{})
	select {
	case <-ready:
	case <-time.After(15 * time.Second):
		return fail(fmt.Errorf("the built-in agent did not start"))
	}
	_ = conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": e.uri, "languageId": "go", "version": 1, "text": e.text,
	}})
	ui.say("The editor opens main.go:")
	ui.say("%s\n", ui.style("2", indent(e.text)))

	accepted := 0
	for _, step := range demoSteps {
		at := strings.Index(e.text, step.at)
		start, end := at, at+len(step.replace)
		if step.after {
			start, end = at+len(step.at), at+len(step.at)
		}
		before := e.text
		// Type it one key at a time, as an editor reports keystrokes.
		if end > start {
			if err := e.replace(ctx, start, end, ""); err != nil {
				return fail(err)
			}
		}
		cursor := start
		for _, r := range step.typed {
			if err := e.replace(ctx, cursor, cursor, string(r)); err != nil {
				return fail(err)
			}
			cursor += len(string(r))
		}
		ui.say("You %s, typing %s:", step.what, ui.style("1", quote(step.typed)))
		ui.say("%s\n", ui.lineDiff(before, start, end, step.typed))
		for {
			edit, err := e.nextEdit(ctx, cursor)
			if err != nil {
				return fail(err)
			}
			if edit == nil {
				ui.say("The agent has no further suggestion.\n")
				break
			}
			s := utf16Offset(e.text, edit.Range.Start.Line, edit.Range.Start.Character)
			en := utf16Offset(e.text, edit.Range.End.Line, edit.Range.End.Character)
			ui.say("The agent suggests the next edit, on line %d:", edit.Range.Start.Line+1)
			ui.say("%s", ui.lineDiff(e.text, s, en, edit.Text))
			// Accept: apply the edit, then run its command, as the editor does.
			if err := e.replace(ctx, s, en, edit.Text); err != nil {
				return fail(err)
			}
			if err := e.call(ctx, "workspace/executeCommand", map[string]any{"command": edit.Command.Command, "arguments": edit.Command.Arguments}, nil); err != nil {
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
	ui.say("%s", ui.style("32", indent(e.text)))
	if err := e.call(ctx, "shutdown", nil, nil); err != nil {
		return fail(err)
	}
	_ = conn.Notify(ctx, "exit", nil)
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("the bridge exited with %v\n%s", err, bridgeErr.String())
	}
	heard, err := agentHeard(tracePath)
	if err != nil {
		return err
	}
	ui.say("\nWhat the agent received, in order (from the bridge's --trace): %s", strings.Join(heard, ", "))
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
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Dir != "bridge→agent" || rec.Message.Method == "" {
			continue
		}
		if rec.Message.Method == last {
			n++
			continue
		}
		flush()
		last, n = rec.Message.Method, 1
	}
	flush()
	return out, sc.Err()
}
