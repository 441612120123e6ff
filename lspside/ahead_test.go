package lspside_test

import (
	"context"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// waitSuggests waits until the agent has received n nes/suggest, and fails the test when it has
// not within 10 s.
func waitSuggests(t *testing.T, e *editor, n int, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := suggestsReceived(e)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the agent received %d nes/suggest, want %d", why, got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAskAheadOnceStill: after a change, once the document has been still, the bridge asks the
// agent at the end of the change before the editor asks; the editor's request there then takes
// that answer without asking again.
func TestAskAheadOnceStill(t *testing.T) {
	a := &appendAtCursor{}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: a.suggest}, cfg: lspside.Config{AskAhead: 20 * time.Millisecond}})
	e.initialize("utf-16")
	e.WaitReady()
	const uri = "file:///work/project/a.go"
	e.Open(uri, "x := f\n")
	e.Edit(uri, 6, 6, "o") // "x := fo": the cursor after the "o"
	waitSuggests(t, e, 1, "asked ahead")
	items, err := e.Inline(uri, fakeeditor.At(0, 7))
	if err != nil || len(items) != 1 || items[0].InsertText != "()" {
		t.Fatalf("the editor's request: %+v %v, want the answer asked ahead", items, err)
	}
	if n, triggers := suggestsReceived(e); n != 1 || triggers[0] != string(acp.UnstableNesTriggerKindAutomatic) {
		t.Errorf("the agent received %d nes/suggest (%v), want the one asked ahead", n, triggers)
	}
	// Elsewhere than the change's end: the editor's request asks.
	if items, err := e.Inline(uri, fakeeditor.At(0, 2)); err != nil || len(items) != 1 {
		t.Errorf("a request elsewhere: %+v %v", items, err)
	}
	if n, _ := suggestsReceived(e); n != 2 {
		t.Errorf("the agent received %d nes/suggest, want a second for the other place", n)
	}
}

// TestAskAheadCancelledByAChange: a change while a request asked ahead is in flight cancels it
// (the agent is told), and the next one is asked for the new text.
func TestAskAheadCancelledByAChange(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var cancelled = make(chan struct{}, 4)
	suggest := func(ctx context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
		if req.Version == 2 {
			select {
			case <-ctx.Done():
				cancelled <- struct{}{}
				return nil, acp.NewRequestCancelled(nil)
			case <-release:
			}
		}
		return insertAt("s", req.Uri, req.Position.Line, req.Position.Character, "()"), nil
	}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: suggest}, cfg: lspside.Config{AskAhead: 20 * time.Millisecond}})
	e.initialize("utf-16")
	e.WaitReady()
	const uri = "file:///work/project/a.go"
	e.Open(uri, "x := f\n")
	e.Edit(uri, 6, 6, "o")
	waitSuggests(t, e, 1, "asked ahead")
	e.Edit(uri, 7, 7, "o")
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the request asked ahead for the old text was not cancelled by the change")
	}
	waitSuggests(t, e, 2, "asked ahead for the new text")
}

// TestAskAheadNotForBilledAgents: an agent that says each request is billed is not asked ahead:
// only what the editor asks reaches it.
func TestAskAheadNotForBilledAgents(t *testing.T) {
	a := &appendAtCursor{}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: a.suggest, InfoMeta: map[string]any{acpside.BilledMetaKey: true}}, cfg: lspside.Config{AskAhead: 10 * time.Millisecond}})
	e.initialize("utf-16")
	e.WaitReady()
	const uri = "file:///work/project/a.go"
	e.Open(uri, "x := f\n")
	e.Edit(uri, 6, 6, "o")
	time.Sleep(100 * time.Millisecond) // ten times the ask-ahead's wait: nothing may come of it
	// A request by hand as a barrier: whatever was asked before it has reached the agent.
	if _, err := e.InlineTriggered(uri, fakeeditor.At(0, 7), 1); err != nil {
		t.Fatal(err)
	}
	if n, triggers := suggestsReceived(e); n != 1 || triggers[0] != string(acp.UnstableNesTriggerKindManual) {
		t.Errorf("the billed agent received %d nes/suggest (%v), want only the one asked by hand", n, triggers)
	}
}

// TestAskAheadJoinedInFlight: the editor's request at the place asked ahead, while that request is
// still in flight, waits for its answer instead of asking again (which would cancel it).
func TestAskAheadJoinedInFlight(t *testing.T) {
	release := make(chan struct{})
	suggest := func(ctx context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, acp.NewRequestCancelled(nil)
		}
		return insertAt("s1", req.Uri, req.Position.Line, req.Position.Character, "()"), nil
	}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: suggest}, cfg: lspside.Config{AskAhead: 20 * time.Millisecond}})
	e.initialize("utf-16")
	e.WaitReady()
	const uri = "file:///work/project/a.go"
	e.Open(uri, "x := f\n")
	e.Edit(uri, 6, 6, "o")
	waitSuggests(t, e, 1, "asked ahead")
	type answer struct {
		items []fakeeditor.InlineItem
		err   error
	}
	got := make(chan answer, 1)
	go func() {
		items, err := e.Inline(uri, fakeeditor.At(0, 7))
		got <- answer{items, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(e.logBuf.String(), "the editor's request joins the one asked ahead") {
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("the editor's request did not join the one in flight:\n%s", e.logBuf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	a := <-got
	if a.err != nil || len(a.items) != 1 || a.items[0].InsertText != "()" {
		t.Errorf("the editor's request: %+v %v, want the answer asked ahead", a.items, a.err)
	}
	if n, _ := suggestsReceived(e); n != 1 {
		t.Errorf("the agent received %d nes/suggest, want only the one asked ahead", n)
	}
}
