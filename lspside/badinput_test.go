package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"fmt"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

// rawFrame writes one LSP frame with this body straight to the bridge's input.
func (e *editor) rawFrame(body string) {
	e.t.Helper()
	if _, err := fmt.Fprintf(e.toSrv, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		e.t.Fatal(err)
	}
}

// Bad input from the editor: each gets the JSON-RPC or LSP error a client expects, or, for a
// notification (which cannot be answered), a log line; and the bridge keeps serving: the document
// stays as the editor last validly sent it, and a good request after it is answered.
func TestBadInputFromTheEditor(t *testing.T) {
	const u = "file:///work/project/bad.go"
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16"}})
	e.initialize("utf-16")
	e.Open(u, "héllo\n")
	e.waitMirror(u, "héllo\n")

	requests := []struct {
		name   string
		method string
		params any
		code   int
		says   string
	}{
		{"unknown method", "acp/nothing", map[string]any{}, -32601, "method not found: acp/nothing"},
		{"wrong types", "textDocument/inlineCompletion", map[string]any{"textDocument": "x", "position": 3}, -32602, "textDocument/inlineCompletion"},
		{"unknown document", "textDocument/inlineCompletion", map[string]any{"textDocument": map[string]any{"uri": "file:///nope.go"}, "position": fakeeditor.At(0, 0)}, -32602, "document not open: file:///nope.go"},
		{"line out of range", "textDocument/inlineCompletion", map[string]any{"textDocument": map[string]any{"uri": u}, "position": fakeeditor.At(7, 0)}, -32602, "position 7:0"},
		{"negative column", "textDocument/inlineCompletion", map[string]any{"textDocument": map[string]any{"uri": u}, "position": fakeeditor.At(0, -1)}, -32602, "position 0:-1"},
		{"code action range reversed", "textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": u}, "range": map[string]any{"start": fakeeditor.At(0, 4), "end": fakeeditor.At(0, 1)}, "context": map[string]any{"diagnostics": []any{}}}, -32602, "range"},
		{"command without arguments", "workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.accept"}, -32602, "takes one argument"},
		{"unknown command", "workspace/executeCommand", map[string]any{"command": "rm -rf"}, -32602, `unknown command "rm -rf"`},
		{"second initialize", "initialize", map[string]any{"capabilities": map[string]any{}}, -32600, "initialize was already received"},
	}
	for _, r := range requests {
		err := e.Call(r.method, r.params, nil)
		if rpcCode(err) != r.code || !strings.Contains(fmt.Sprint(err), r.says) {
			t.Errorf("%s: got %v, want code %d saying %q", r.name, err, r.code, r.says)
		}
	}

	// Notifications the bridge must refuse: logged, nothing changes.
	e.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file:///nope.go", "version": 2}, "contentChanges": []any{map[string]any{"text": "x"}}})
	e.ChangeAt(u, 2, fakeeditor.Replace(fakeeditor.At(5, 0), fakeeditor.At(6, 0), "x"))                            // out of range
	e.ChangeAt(u, 3, fakeeditor.Replace(fakeeditor.At(0, 3), fakeeditor.At(0, 1), "x"))                            // reversed
	e.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": u, "version": "two"}}) // wrong types
	e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": "file:///nope.go"}})
	e.Notify("no/such/notification", map[string]any{"x": 1})
	e.rawFrame(`{"jsonrpc":"2.0","id":77,"method":`)
	// A stale version is applied (the editor's text is the truth) and logged.
	e.ChangeAt(u, 1, fakeeditor.Replace(fakeeditor.At(0, 0), fakeeditor.At(0, 0), "¡"))
	e.waitMirror(u, "¡héllo\n")
	// Invalid UTF-8 in a change: JSON text must be UTF-8, so each bad byte reads as U+FFFD, and
	// the bridge and the agent agree on the result.
	e.rawFrame(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"` + u + `","version":9},"contentChanges":[{"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":1}},"text":"` + "\xff\xfe" + `"}]}}`)
	e.waitMirror(u, "¡\ufffd\ufffdhéllo\n")
	if _, err := e.Inline(u, fakeeditor.At(0, 2)); err != nil {
		t.Fatalf("a good request after bad input: %v", err)
	}
	log := e.logBuf.String()
	for _, want := range []string{
		"file:///nope.go: document is not open",
		"content change 0",
		"bad params",
		"did not increase the version",
		"malformed message from the editor",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
}
