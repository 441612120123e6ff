package nesagent

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// forgetful is an engine that hears of closed documents: each DocumentClosed is sent on closed,
// with whether the agent still had the document open then. A request for a document that
// entered holds Suggest until release is closed.
type forgetful struct {
	agent   *Agent
	entered chan string
	release chan struct{}
	closed  chan closing
}

type closing struct {
	uri  string
	open bool
}

func (f *forgetful) Suggest(ctx context.Context, req Request) ([]Suggestion, error) {
	f.entered <- req.URI
	select {
	case <-f.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []Suggestion{{Edits: []TextEdit{{Start: req.Cursor, End: req.Cursor, NewText: "!"}}}}, nil
}

func (f *forgetful) DocumentClosed(uri string) {
	f.closed <- closing{uri: uri, open: f.agent.isOpen(uri)}
}

// serveForgetful runs an agent around a forgetful engine and returns the engine and the bridge's
// client side, initialized, with NES started.
func serveForgetful(t *testing.T) (*forgetful, *acpside.Agent) {
	t.Helper()
	f := &forgetful{entered: make(chan string, 4), release: make(chan struct{}), closed: make(chan closing, 4)}
	f.agent = New(f, Options{Name: "test", Version: "1"})
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	go func() {
		f.agent.Serve(toAgentR, fromAgentW)
		fromAgentW.Close()
	}()
	c := acpside.Connect(fromAgentR, toAgentW, acpside.Options{Log: zerolog.Nop()})
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.StartNES(ctx, acp.UnstableStartNesRequest{}); err != nil {
		t.Fatal(err)
	}
	return f, c
}

func (f *forgetful) wait(t *testing.T, what string) closing {
	t.Helper()
	select {
	case c := <-f.closed:
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("the engine was not told of %s", what)
		return closing{}
	}
}

// TestKitTellsTheEngineOfAClose: document/didClose reaches an engine that is a Forgetter, once
// the agent has dropped its mirror of the document.
func TestKitTellsTheEngineOfAClose(t *testing.T) {
	f, c := serveForgetful(t)
	ctx := context.Background()
	const u = "file:///w/a.go"
	if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: u, LanguageId: "go", Version: 1, Text: "x := 1\n"}); err != nil {
		t.Fatal(err)
	}
	if err := c.DidClose(ctx, acp.UnstableDidCloseDocumentNotification{Uri: u}); err != nil {
		t.Fatal(err)
	}
	if got := f.wait(t, "the close"); got.uri != u || got.open {
		t.Errorf("told of %+v, want %s once the agent no longer has it open", got, u)
	}
	select {
	case got := <-f.closed:
		t.Errorf("told again of %+v", got)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestKitTellsAgainAfterARequestInFlight: a document closed while the engine answers a request
// for it is told of again once that request is answered, for what the engine kept for it
// meanwhile.
func TestKitTellsAgainAfterARequestInFlight(t *testing.T) {
	f, c := serveForgetful(t)
	ctx := context.Background()
	const u = "file:///w/a.go"
	if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: u, LanguageId: "go", Version: 1, Text: "x := 1\n"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: u, Version: 1, Position: acp.UnstablePosition{Line: 0, Character: 6}}); err != nil {
			t.Error(err)
		}
	})
	select {
	case <-f.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not reach the engine")
	}
	if err := c.DidClose(ctx, acp.UnstableDidCloseDocumentNotification{Uri: u}); err != nil {
		t.Fatal(err)
	}
	if got := f.wait(t, "the close"); got.uri != u || got.open {
		t.Errorf("told of %+v, want %s closed", got, u)
	}
	close(f.release)
	wg.Wait()
	if got := f.wait(t, "the close again, after the request"); got.uri != u || got.open {
		t.Errorf("told again of %+v, want %s closed", got, u)
	}
}
