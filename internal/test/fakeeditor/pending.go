package fakeeditor

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// Pending is a request the editor sent whose answer it has not read yet: what an editor holds
// while the user goes on typing, and cancels when they move on ([Editor.Start]).
type Pending struct {
	e      *Editor
	method string
	sent   chan struct{} // closed once the request is on the wire, or failed before
	done   chan struct{} // closed once the answer (or an error) is in
	id     json.RawMessage
	err    error
}

// sentKey carries, in the context of a call, the function told the id the call was sent with.
type sentKey struct{}

// idStream is the editor's stream: it tells a call made by [Editor.Start] the id the connection
// gave it, which the connection does not return until the answer is in.
type idStream struct{ jsonrpc2.Stream }

func (s idStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	if tell, ok := ctx.Value(sentKey{}).(func(json.RawMessage)); ok {
		if b, err := jsonrpc2.EncodeMessage(msg); err == nil {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(b, &m) == nil && m.Method != "" && m.ID != nil {
				tell(m.ID)
			}
		}
	}
	return s.Stream.Write(ctx, msg)
}

// Start sends a request and returns without waiting for its answer, which [Pending.Wait] decodes
// into result (unless nil). It returns once the request is on the wire, so that
// [Pending.Cancel] can name it. The request is bounded by the editor's timeout.
func (e *Editor) Start(ctx context.Context, method string, params, result any) *Pending {
	p := &Pending{e: e, method: method, sent: make(chan struct{}), done: make(chan struct{})}
	var once sync.Once
	tell := func(id json.RawMessage) {
		once.Do(func() {
			p.id = append(json.RawMessage(nil), id...)
			close(p.sent)
		})
	}
	cctx := context.WithValue(ctx, sentKey{}, tell)
	go func() {
		err := e.Call(cctx, method, params, result)
		once.Do(func() { close(p.sent) }) // failed before it was written
		p.err = err
		close(p.done)
	}()
	<-p.sent
	return p
}

// Cancel tells the bridge the editor no longer wants the answer ($/cancelRequest with the
// request's id), as an editor does when the user moves on. The answer is still read: LSP has the
// server answer a cancelled request (with error -32800, or with what it has).
func (p *Pending) Cancel() error {
	if p.id == nil {
		return errors.New(p.method + " was never sent")
	}
	return p.e.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": p.id})
}

// Done is closed once the answer is in.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait waits for the answer and returns its error: the bridge's error answer, or the editor's
// timeout.
func (p *Pending) Wait() error {
	<-p.done
	return p.err
}

// ErrorCode is the code of an error answer from the bridge, or 0 when err is not one.
func ErrorCode(err error) int64 {
	var rerr *jsonrpc2.Error
	if errors.As(err, &rerr) {
		return int64(rerr.Code)
	}
	return 0
}
