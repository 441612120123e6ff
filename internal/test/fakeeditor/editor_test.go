package fakeeditor

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
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

// TestPendingCancelAndProgress: a request started with Start can be cancelled by its id
// ($/cancelRequest) and its answer is still read; the bridge's progress is created and recorded.
func TestPendingCancelAndProgress(t *testing.T) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(readWriteCloser{sr, sw}))
	var mu sync.Mutex
	waiting := map[string]chan struct{}{} // id -> closed by its $/cancelRequest
	early := map[string]bool{}            // ids whose $/cancelRequest came before the request was seen
	conn.Go(context.Background(), func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		switch req.Method() {
		case "slow":
			n, _ := req.ID().Number()
			id := []byte(strconv.FormatInt(n, 10))
			ch := make(chan struct{})
			mu.Lock()
			if early[string(id)] {
				close(ch)
			} else {
				waiting[string(id)] = ch
			}
			mu.Unlock()
			jsonrpc2.Async(ctx)
			go func() {
				var res any
				_, _ = conn.Call(context.Background(), "window/workDoneProgress/create", map[string]any{"token": "t" + string(id)}, &res)
				_ = conn.Notify(context.Background(), "$/progress", map[string]any{"token": "t" + string(id), "value": map[string]any{"kind": "begin"}})
			}()
			select {
			case <-ch:
				return nil, &jsonrpc2.Error{Code: -32800, Message: "cancelled " + string(id)}
			case <-time.After(5 * time.Second):
				return "never cancelled", nil
			}
		case "$/cancelRequest":
			var p struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(req.Params(), &p)
			mu.Lock()
			if ch := waiting[string(p.ID)]; ch != nil {
				close(ch)
				delete(waiting, string(p.ID))
			} else {
				early[string(p.ID)] = true
			}
			mu.Unlock()
		}
		return nil, nil
	})
	e := Connect(cr, cw, Options{Timeout: 10 * time.Second})
	t.Cleanup(func() { _ = e.Close(); _ = conn.Close() })
	env := NewEnv(t, e)

	var first, second string
	p1 := env.Start("slow", nil, &first)
	p2 := env.Start("slow", nil, &second)
	if string(p1.id) == string(p2.id) {
		t.Fatalf("two requests with the id %s", p1.id)
	}
	if err := p2.Cancel(); err != nil {
		t.Fatal(err)
	}
	err := p2.Wait()
	if ErrorCode(err) != -32800 || err.Error() != "cancelled "+string(p2.id) {
		t.Errorf("the cancelled request answered %q, %v (code %d); want -32800 for its id %s", second, err, ErrorCode(err), p2.id)
	}
	select {
	case <-p1.Done():
		t.Errorf("the other request ended too: %v", p1.Wait())
	case <-time.After(100 * time.Millisecond):
	}
	if err := p1.Cancel(); err != nil || ErrorCode(p1.Wait()) != -32800 {
		t.Errorf("the first request: %v", p1.Wait())
	}
	env.Await(Expectation{Description: "two progress begun", Met: func(r *Record) bool { return len(r.Created) == 2 && len(r.Progress) == 2 }})
}

// TestApplyAction: a code action's edits reach the bridge as one didChange, last edit first, and
// the editor's copy reads as the edit says; an action editing a document that is not open fails.
func TestApplyAction(t *testing.T) {
	ed, changes, _ := server(t)
	env := NewEnv(t, ed)
	env.Initialize("file:///w", "utf-8")
	const u = "file:///w/a.go"
	env.Open(u, "fo(1)\nfo(2)\n")
	env.ApplyAction(CodeAction{Title: "x", Edit: &WorkspaceEdit{Changes: map[string][]TextEdit{u: {
		{Range: Span(At(0, 2), At(0, 2)), NewText: "o"},
		{Range: Span(At(1, 0), At(1, 2)), NewText: "bar"},
	}}}, Command: &Command{Command: "acp-lsp-bridge.accept", Arguments: []any{"s1"}}})
	if got := ed.Text(u); got != "foo(1)\nbar(2)\n" {
		t.Errorf("text %q", got)
	}
	if got := string(<-changes); !strings.Contains(got, `"contentChanges":[{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":2}},"text":"bar"},{"range":{"start":{"line":0,"character":2}`) {
		t.Errorf("didChange %s", got)
	}
	if err := ed.ApplyAction(context.Background(), CodeAction{Title: "y", Edit: &WorkspaceEdit{Changes: map[string][]TextEdit{"file:///w/b.go": {{NewText: "x"}}}}}); err == nil {
		t.Error("an edit of a document that is not open was applied")
	}
}
