package main

import (
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

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testagent"
)

// demoRules are the scripted agent's suggestions in the demo: fixed rules, no model.
var demoRules = []testagent.Rule{
	{When: "fmt.Pri", Find: "fmt.Pri", Replace: `fmt.Printf("こんにちは, %s!\n", name)`},
	{When: "defer fmt.", Find: "defer fmt.", Replace: `defer fmt.Println("bye 👋")`},
}

const demoDoc = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tname := \"世界\"\n\t\n\t\n}\n"

// runDemoAgent is the hidden "demo-agent" subcommand: the scripted agent the demo talks to.
func runDemoAgent(args []string, stdin io.Reader, stdout io.Writer) int {
	cfg := testagent.Config{Encoding: "utf-32", Rules: demoRules}
	if len(args) == 1 {
		f, err := os.OpenFile(args[0], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return 2
		}
		defer f.Close()
		cfg.Log = f
	}
	testagent.New(cfg).Serve(stdin, stdout)
	return 0
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

// runDemo drives a scripted editing session through the real bridge binary, over real pipes, with
// a scripted agent, and prints what a user would see.
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

// utf16Pos is the LSP position (utf-16, as most editors use) of a byte offset.
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

type demoItem struct {
	InsertText string `json:"insertText"`
	Range      struct {
		Start struct {
			Line      int `json:"line"`
			Character int `json:"character"`
		} `json:"start"`
		End struct {
			Line      int `json:"line"`
			Character int `json:"character"`
		} `json:"end"`
	} `json:"range"`
	Command struct {
		Command   string `json:"command"`
		Arguments []any  `json:"arguments"`
	} `json:"command"`
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
	agentLog := filepath.Join(dir, "agent.jsonl")
	cmd := exec.CommandContext(ctx, self, "--log-level", "error", "--", self, "demo-agent", agentLog)
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
	ui.say("%s", ui.style("1", "acp-lsp-bridge demo")+": an editor session, scripted, through the real bridge binary over real pipes.")
	ui.say("The agent is a scripted test agent with two fixed rules (no model, no network).\n")

	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(struct {
		io.Reader
		io.WriteCloser
	}{out, in}))
	conn.Go(ctx, jsonrpc2.MethodNotFoundHandler)
	e := &demoEditor{conn: conn, uri: "file://" + filepath.Join(dir, "main.go"), text: demoDoc, version: 1}
	fail := func(err error) error {
		_ = in.Close()
		_ = cmd.Wait()
		return fmt.Errorf("%w\n%s", err, bridgeErr.String())
	}
	var init struct {
		Capabilities struct {
			PositionEncoding string `json:"positionEncoding"`
		} `json:"capabilities"`
	}
	if err := e.call(ctx, "initialize", map[string]any{
		"processId": os.Getpid(), "rootUri": "file://" + dir,
		"capabilities": map[string]any{"general": map[string]any{"positionEncodings": []string{"utf-16"}}},
		"clientInfo":   map[string]any{"name": "demo editor"},
	}, &init); err != nil {
		return fail(err)
	}
	_ = conn.Notify(ctx, "initialized", map[string]any{})
	_ = conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": e.uri, "languageId": "go", "version": 1, "text": e.text,
	}})
	ui.say("The editor opened main.go; the bridge negotiated %s positions with it (the agent uses utf-32).", init.Capabilities.PositionEncoding)
	ui.say("%s", ui.style("2", indent(e.text)))

	for step, typed := range []string{"fmt.Pri", "defer fmt."} {
		// Type on the (step+6)th line, one character at a time.
		at := utf16Offset(e.text, 6+step, 1)
		for _, r := range typed {
			if err := e.replace(ctx, at, at, string(r)); err != nil {
				return fail(err)
			}
			at += len(string(r))
		}
		ui.say("You type %s on line %d.", ui.style("1", quote(typed)), 7+step)
		var res struct {
			Items []demoItem `json:"items"`
		}
		if err := e.call(ctx, "textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": e.uri}, "position": utf16Pos(e.text, at),
			"context": map[string]any{"triggerKind": 2},
		}, &res); err != nil {
			return fail(err)
		}
		if len(res.Items) == 0 {
			return fail(fmt.Errorf("no suggestion for %q", typed))
		}
		it := res.Items[0]
		start := utf16Offset(e.text, it.Range.Start.Line, it.Range.Start.Character)
		end := utf16Offset(e.text, it.Range.End.Line, it.Range.End.Character)
		lineStart := strings.LastIndexByte(e.text[:at], '\n') + 1
		ghost := strings.TrimPrefix(it.InsertText, e.text[start:at])
		ui.say("The agent suggests (ghost text):\n    %s%s", e.text[lineStart:at], ui.style("2;3", ghost))
		if err := e.replace(ctx, start, end, it.InsertText); err != nil {
			return fail(err)
		}
		if err := e.call(ctx, "workspace/executeCommand", map[string]any{"command": it.Command.Command, "arguments": it.Command.Arguments}, nil); err != nil {
			return fail(err)
		}
		ui.say("You accept it (%s %v).\n", it.Command.Command, it.Command.Arguments)
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
	heard, err := agentHeard(agentLog)
	if err != nil {
		return err
	}
	ui.say("What the agent received, in order: %s", strings.Join(heard, ", "))
	return nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// agentHeard lists the methods the demo agent received, with the ids of accepted suggestions, runs
// of the same method folded into one entry ("document/didChange ×10").
func agentHeard(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
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
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m testagent.Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, err
		}
		name := m.Method
		if m.Method == "nes/accept" {
			var p struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(m.Params, &p)
			name += " " + p.ID
		}
		if name == last {
			n++
			continue
		}
		flush()
		last, n = name, 1
	}
	flush()
	return out, nil
}
