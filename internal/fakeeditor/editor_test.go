package fakeeditor

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

func TestApplyEdits(t *testing.T) {
	text := "a𐐀b\nxyz\n"
	// utf-16: 𐐀 is two units; both ranges are read against the text before the edits.
	got, err := ApplyEdits(text, []TextEdit{
		{Range: Span(At(0, 1), At(0, 3)), NewText: "é"},
		{Range: Span(At(1, 0), At(1, 1)), NewText: "X"},
	}, encoding.UTF16)
	if err != nil || got != "aéb\nXyz\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := ApplyEdits(text, []TextEdit{{Range: Span(At(5, 0), At(5, 0))}}, encoding.UTF16); err == nil {
		t.Error("an edit past the end was applied")
	}
}

// server is a minimal language server: it chooses utf-8, records didChange, and sends one
// message, one question and one log line when initialized.
func server(t *testing.T) (*Editor, chan json.RawMessage, chan string) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(readWriteCloser{sr, sw}))
	changes := make(chan json.RawMessage, 10)
	answers := make(chan string, 1)
	conn.Go(context.Background(), func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		switch req.Method() {
		case "initialize":
			return map[string]any{"capabilities": map[string]any{"positionEncoding": "utf-8"}}, nil
		case "initialized":
			go func() {
				_ = conn.Notify(context.Background(), "window/showMessage", map[string]any{"type": 3, "message": "hello"})
				var res struct {
					Title string `json:"title"`
				}
				_, _ = conn.Call(context.Background(), "window/showMessageRequest", map[string]any{"type": 3, "message": "sign in?", "actions": []any{map[string]any{"title": "Yes"}, map[string]any{"title": "No"}}}, &res)
				answers <- res.Title
				_ = conn.Notify(context.Background(), "window/logMessage", map[string]any{"type": 3, "message": "x is ready (utf-8)"})
			}()
		case "textDocument/didChange":
			changes <- append(json.RawMessage(nil), req.Params()...)
		}
		return nil, nil
	})
	e := Connect(cr, cw, Options{Answer: func(_ string, actions []string) string { return actions[1] }, Timeout: 5 * time.Second})
	t.Cleanup(func() { _ = e.Close(); _ = conn.Close() })
	return e, changes, answers
}

func TestEditorKeepsTheTextAndAwaits(t *testing.T) {
	ed, changes, answers := server(t)
	env := NewEnv(t, ed)
	if enc := env.Initialize("file:///w", "utf-32", "utf-8"); enc != "utf-8" || ed.Encoding() != encoding.UTF8 {
		t.Fatalf("encoding %q", enc)
	}
	env.Await(ShownMessage("hello"), Question("sign in"), Ready())
	if a := <-answers; a != "No" {
		t.Errorf("the question was answered %q", a)
	}
	const u = "file:///w/a.go"
	env.Open(u, "é = 1\n")
	env.Edit(u, 0, 2, "x") // é is two bytes: utf-8 columns 0..2
	if got := string(<-changes); !strings.Contains(got, `"version":2`) || !strings.Contains(got, `"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":2}},"text":"x"`) {
		t.Errorf("didChange %s", got)
	}
	if ed.Text(u) != "x = 1\n" || ed.Version(u) != 2 {
		t.Errorf("text %q version %d", ed.Text(u), ed.Version(u))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := ed.Await(ctx, ShownMessage("never"))
	if err == nil || !strings.Contains(err.Error(), `waited in vain for a window/showMessage containing "never"`) || !strings.Contains(err.Error(), `"hello"`) {
		t.Errorf("an unmet expectation: %v", err)
	}
}
