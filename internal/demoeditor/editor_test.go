package demoeditor

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// server is a bridge's side for the test: it chooses utf-16, says the agent is ready once
// initialized, and hands on each didChange's params.
func server(t *testing.T) (*Editor, <-chan json.RawMessage) {
	t.Helper()
	toBridge, editorOut := io.Pipe()
	editorIn, fromBridge := io.Pipe()
	changes := make(chan json.RawMessage, 10)
	var conn jsonrpc2.Conn
	conn = jsonrpc2.NewConn(jsonrpc2.NewStream(pipes{toBridge, fromBridge}))
	conn.Go(context.Background(), func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		switch req.Method() {
		case "initialize":
			return map[string]any{"capabilities": map[string]any{"positionEncoding": "utf-16"}}, nil
		case "initialized":
			go conn.Notify(context.Background(), "window/logMessage", map[string]any{"type": 3, "message": "acp-lsp-bridge: test is ready (x)"})
		case "textDocument/didChange", "workspace/executeCommand":
			changes <- json.RawMessage(append([]byte(nil), req.Params()...))
		case "textDocument/copilotInlineEdit":
			return json.RawMessage(`{"edits":[{"text":"e","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},` +
				`"textDocument":{"uri":"u","version":2},"command":{"title":"Accept","command":"acp.accept","arguments":[{"id":7}]}}]}`), nil
		}
		return nil, nil
	})
	e := Connect(editorIn, editorOut)
	t.Cleanup(func() { _ = e.Close(); _ = conn.Close() })
	return e, changes
}

// TestEditInUTF16: the editor waits for the agent, and sends an edit after a character outside
// the BMP in utf-16 positions, as the next version, keeping its buffer in step.
func TestEditInUTF16(t *testing.T) {
	e, changes := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Initialize(ctx, Init{Root: "file:///w", Encodings: []string{"utf-16"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	const uri = "file:///w/a.go"
	if err := e.Open(ctx, uri, "go", "x\n😀b := 1\n"); err != nil {
		t.Fatal(err)
	}
	start := len("x\n😀")
	if err := e.Edit(ctx, uri, start, start+1, "cd"); err != nil {
		t.Fatal(err)
	}
	want := `{"contentChanges":[{"range":{"end":{"character":3,"line":1},"start":{"character":2,"line":1}},"text":"cd"}],"textDocument":{"uri":"file:///w/a.go","version":2}}`
	got := <-changes
	var g, w any
	_ = json.Unmarshal(got, &g)
	_ = json.Unmarshal([]byte(want), &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("didChange:\n%s\nwant:\n%s", got, want)
	}
	if got := e.Text(uri); got != "x\n😀cd := 1\n" {
		t.Errorf("buffer %q", got)
	}
	p, err := e.PosOf(uri, start+2)
	if err != nil || p != (Pos{Line: 1, Character: 4}) {
		t.Errorf("PosOf = %v, %v", p, err)
	}
	if off, err := e.OffsetOf(uri, p); err != nil || off != start+2 {
		t.Errorf("OffsetOf = %d, %v", off, err)
	}
	// A suggestion, accepted by its command with its arguments as the bridge sent them.
	sugs, err := e.Suggestions(ctx, uri, p)
	if err != nil || len(sugs) != 1 || sugs[0].Text != "e" || sugs[0].Range.End != (Pos{0, 1}) || sugs[0].Command == nil {
		t.Fatalf("Suggestions = %+v, %v", sugs, err)
	}
	if err := e.Execute(ctx, *sugs[0].Command); err != nil {
		t.Fatal(err)
	}
	if got := string(<-changes); got != `{"command":"acp.accept","arguments":[{"id":7}]}` {
		t.Errorf("executeCommand %s", got)
	}
}
