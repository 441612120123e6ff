package lspside_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
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

// aheadURI is the document the ask-ahead tests type in.
const aheadURI = "file:///work/project/a.go"

// aheadEditor starts a bridge that asks ahead after wait, with an agent answering with suggest
// (and saying meta of itself), and opens aheadURI with text.
func aheadEditor(t *testing.T, suggest func(context.Context, acp.UnstableSuggestNesRequest, string) (any, *acp.RequestError), meta map[string]any, wait time.Duration, text string) *editor {
	t.Helper()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: suggest, InfoMeta: meta}, cfg: lspside.Config{AskAhead: wait}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(aheadURI, text)
	return e
}

// editorAsks makes the editor ask for a suggestion at the start of uri as it does while the user
// types (an automatic inline request): the bridge asks ahead only for an editor that does. It
// returns how many nes/suggest the agent has received since.
func editorAsks(t *testing.T, e *editor, uri string) int {
	t.Helper()
	if _, err := e.Inline(uri, fakeeditor.At(0, 0)); err != nil {
		t.Fatal(err)
	}
	n, _ := suggestsReceived(e)
	return n
}

// TestAskAheadOnceStill: after a change, once the document has been still, the bridge asks the
// agent at the end of the change before the editor asks; the editor's request there then takes
// that answer without asking again.
func TestAskAheadOnceStill(t *testing.T) {
	a := &appendAtCursor{}
	e := aheadEditor(t, a.suggest, nil, 20*time.Millisecond, "x := f\n")
	const uri = aheadURI
	base := editorAsks(t, e, uri)
	e.Edit(uri, 6, 6, "o") // "x := fo": the cursor after the "o"
	waitSuggests(t, e, base+1, "asked ahead")
	items, err := e.Inline(uri, fakeeditor.At(0, 7))
	if err != nil || len(items) != 1 || items[0].InsertText != "()" {
		t.Fatalf("the editor's request: %+v %v, want the answer asked ahead", items, err)
	}
	if n, triggers := suggestsReceived(e); n != base+1 || triggers[base] != string(acp.UnstableNesTriggerKindAutomatic) {
		t.Errorf("the agent received %d nes/suggest (%v), want the one asked ahead", n-base, triggers)
	}
	// Elsewhere than the change's end: the editor's request asks.
	if items, err := e.Inline(uri, fakeeditor.At(0, 2)); err != nil || len(items) != 1 {
		t.Errorf("a request elsewhere: %+v %v", items, err)
	}
	if n, _ := suggestsReceived(e); n != base+2 {
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
	e := aheadEditor(t, suggest, nil, 20*time.Millisecond, "x := f\n")
	const uri = aheadURI
	base := editorAsks(t, e, uri)
	e.Edit(uri, 6, 6, "o")
	waitSuggests(t, e, base+1, "asked ahead")
	e.Edit(uri, 7, 7, "o")
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the request asked ahead for the old text was not cancelled by the change")
	}
	waitSuggests(t, e, base+2, "asked ahead for the new text")
}

// TestAskAheadNotForBilledAgents: an agent that says each request is billed is not asked ahead:
// only what the editor asks reaches it.
func TestAskAheadNotForBilledAgents(t *testing.T) {
	a := &appendAtCursor{}
	e := aheadEditor(t, a.suggest, map[string]any{acpside.BilledMetaKey: true}, 10*time.Millisecond, "x := f\n")
	const uri = aheadURI
	base := editorAsks(t, e, uri)
	e.Edit(uri, 6, 6, "o")
	time.Sleep(100 * time.Millisecond) // ten times the ask-ahead's wait: nothing may come of it
	// A request by hand as a barrier: whatever was asked before it has reached the agent.
	if _, err := e.InlineTriggered(uri, fakeeditor.At(0, 7), 1); err != nil {
		t.Fatal(err)
	}
	if n, triggers := suggestsReceived(e); n != base+1 || triggers[base] != string(acp.UnstableNesTriggerKindManual) {
		t.Errorf("the billed agent received %d nes/suggest (%v), want only the one asked by hand", n, triggers)
	}
}

// TestAskAheadJoinedInFlight: the editor's request at the place asked ahead, while that request is
// still in flight, waits for its answer instead of asking again (which would cancel it).
func TestAskAheadJoinedInFlight(t *testing.T) {
	release := make(chan struct{})
	suggest := func(ctx context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
		if req.Version == 1 {
			return map[string]any{"suggestions": []any{}}, nil // the editor's first request, before the change
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, acp.NewRequestCancelled(nil)
		}
		return insertAt("s1", req.Uri, req.Position.Line, req.Position.Character, "()"), nil
	}
	e := aheadEditor(t, suggest, nil, 20*time.Millisecond, "x := f\n")
	const uri = aheadURI
	base := editorAsks(t, e, uri)
	e.Edit(uri, 6, 6, "o")
	waitSuggests(t, e, base+1, "asked ahead")
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
	if n, _ := suggestsReceived(e); n != base+1 {
		t.Errorf("the agent received %d nes/suggest, want only the one asked ahead", n-base)
	}
}

// TestAskAheadOnlyForAnEditorThatAsks: an editor that has never asked while the user types (one
// that asks only when the user opens a menu) is not asked ahead for: its answer would never be
// taken.
func TestAskAheadOnlyForAnEditorThatAsks(t *testing.T) {
	a := &appendAtCursor{}
	e := aheadEditor(t, a.suggest, nil, 10*time.Millisecond, "x := f\n")
	const uri = aheadURI
	e.Edit(uri, 6, 6, "o")
	time.Sleep(100 * time.Millisecond) // ten times the ask-ahead's wait: nothing may come of it
	if _, err := e.InlineTriggered(uri, fakeeditor.At(0, 7), 1); err != nil {
		t.Fatal(err)
	}
	if n, triggers := suggestsReceived(e); n != 1 || triggers[0] != string(acp.UnstableNesTriggerKindManual) {
		t.Errorf("the agent received %d nes/suggest (%v), want only the one asked by hand", n, triggers)
	}
}

// TestAskAheadEndsWhenTheEditorAsksElsewhere: the editor asks, at another place, before the
// bridge's own wait is over: the bridge does not ask ahead after it, whose answer would replace
// the one the editor was shown (lsp-mode took a completion from such an answer, at the change,
// with the cursor on the next line).
func TestAskAheadEndsWhenTheEditorAsksElsewhere(t *testing.T) {
	a := &appendAtCursor{}
	e := aheadEditor(t, a.suggest, nil, 80*time.Millisecond, "x := f\ny\n")
	const uri = aheadURI
	base := editorAsks(t, e, uri)
	e.Edit(uri, 6, 6, "o")
	items, err := e.InlineTriggered(uri, fakeeditor.At(1, 1), 1)
	if err != nil || len(items) != 1 {
		t.Fatalf("the editor's request: %+v %v", items, err)
	}
	time.Sleep(300 * time.Millisecond) // past the ask-ahead's wait: nothing may come of it
	if n, triggers := suggestsReceived(e); n != base+1 {
		t.Errorf("the agent received %d nes/suggest (%v) after the change, want only the editor's", n-base, triggers[base:])
	}
	for _, m := range e.theAgent().Received() {
		if m.Method == "nes/reject" && strings.Contains(string(m.Params), items[0].Command.Arguments[0].(string)) {
			t.Errorf("the suggestion the editor was shown ended: %s", m.Params)
		}
	}
}

// TestSuggestionReadyTellsTheEditor: an editor that asked for acp-lsp-bridge/suggestionReady
// (initializationOptions.suggestionReady) hears, with the document's version and the place, once
// a suggestion asked ahead is answered, and its request there then takes it without asking
// again; one that did not ask hears nothing.
func TestSuggestionReadyTellsTheEditor(t *testing.T) {
	for _, want := range []bool{true, false} {
		a := &appendAtCursor{}
		e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: a.suggest}, cfg: lspside.Config{AskAhead: 20 * time.Millisecond}})
		e.InitializeWith(fakeeditor.InitParams{Root: e.root, Encodings: []string{"utf-16"}, Options: map[string]any{"suggestionReady": want}})
		e.WaitReady()
		const uri = "file:///work/project/a.go"
		e.Open(uri, "x := f\n")
		base := editorAsks(t, e, uri)
		e.Edit(uri, 6, 6, "o")
		waitSuggests(t, e, base+1, "asked ahead")
		if !want {
			// A request by hand as a barrier: the answer asked ahead came before its own.
			if _, err := e.InlineTriggered(uri, fakeeditor.At(0, 7), 1); err != nil {
				t.Fatal(err)
			}
			if r := e.Record().Ready; len(r) != 0 {
				t.Errorf("an editor that did not ask heard %s", r)
			}
			continue
		}
		e.Await(fakeeditor.Expectation{Description: "acp-lsp-bridge/suggestionReady", Met: func(r *fakeeditor.Record) bool { return len(r.Ready) > 0 }})
		var got lspside.SuggestionReady
		if err := json.Unmarshal(e.Record().Ready[0], &got); err != nil {
			t.Fatal(err)
		}
		if got.TextDocument.URI != uri || got.TextDocument.Version != e.Version(uri) || got.Position.Line != 0 || got.Position.Character != 7 {
			t.Errorf("suggestionReady %+v, want %s version %d at 0:7", got, uri, e.Version(uri))
		}
		items, err := e.Inline(uri, fakeeditor.At(0, 7))
		if err != nil || len(items) != 1 || items[0].InsertText != "()" {
			t.Fatalf("the editor's request: %+v %v, want the answer asked ahead", items, err)
		}
		if n, _ := suggestsReceived(e); n != base+1 {
			t.Errorf("the agent received %d nes/suggest after the change, want the one asked ahead", n-base)
		}
	}
}

// TestAskAheadAtOnceAfterAnAccept: the change that takes a whole suggestion is no keystroke that
// another may follow: the bridge asks ahead after it at once, not after the document has been
// still (here an hour).
func TestAskAheadAtOnceAfterAnAccept(t *testing.T) {
	a := &appendAtCursor{}
	e := aheadEditor(t, a.suggest, nil, time.Hour, "x := f\n")
	const uri = aheadURI
	items, err := e.Inline(uri, fakeeditor.At(0, 6))
	if err != nil || len(items) != 1 {
		t.Fatalf("the editor's request: %+v %v", items, err)
	}
	base, _ := suggestsReceived(e)
	e.Accept(uri, items[0])
	waitSuggests(t, e, base+1, "asked after the accept")
	if e.Text(uri) != "x := f()\n" {
		t.Errorf("the text after the accept: %q", e.Text(uri))
	}
}

// TestAskAheadNotWhileTheEditorDoesNotAsk: an editor that says it does not ask about a document
// while it changes (acp-lsp-bridge/asking: Neovim outside insert mode) is not asked ahead for
// it, until it says it asks again.
func TestAskAheadNotWhileTheEditorDoesNotAsk(t *testing.T) {
	a := &appendAtCursor{}
	e := aheadEditor(t, a.suggest, nil, 10*time.Millisecond, "x := f\n")
	const uri = aheadURI
	base := editorAsks(t, e, uri)
	e.Notify(lspside.NotifyAsking, map[string]any{"textDocument": map[string]any{"uri": uri}, "automatic": false})
	e.Edit(uri, 6, 6, "o")
	time.Sleep(100 * time.Millisecond) // ten times the ask-ahead's wait: nothing may come of it
	if _, err := e.InlineTriggered(uri, fakeeditor.At(0, 7), 1); err != nil {
		t.Fatal(err)
	}
	if n, triggers := suggestsReceived(e); n != base+1 {
		t.Errorf("the agent received %d nes/suggest (%v) after the change, want only the one asked by hand", n-base, triggers[base:])
	}
	e.Notify(lspside.NotifyAsking, map[string]any{"textDocument": map[string]any{"uri": uri}, "automatic": true})
	e.Edit(uri, 7, 7, "o")
	waitSuggests(t, e, base+2, "asked ahead once the editor asks again")
	// Params it cannot read: a log line, and the bridge goes on.
	e.Notify(lspside.NotifyAsking, map[string]any{"textDocument": map[string]any{"uri": uri}})
	if _, err := e.InlineTriggered(uri, fakeeditor.At(0, 8), 1); err != nil {
		t.Fatal(err)
	}
}

// TestAcceptCommandAfterTheAskAtTheAccept: the editor applies a suggestion, and the bridge asks
// for the next one at once; that answer comes before the editor runs the suggestion's accept
// command. The agent hears of the accept once, in one order: the change, nes/accept, then the
// request asked at it (not the request first and the accept whenever the command comes). The
// command still finds the suggestion it accepts: the bridge logs no accept of a suggestion that
// is not live.
func TestAcceptCommandAfterTheAskAtTheAccept(t *testing.T) {
	a := &appendAtCursor{}
	e := aheadEditor(t, a.suggest, nil, time.Hour, "x := f\n")
	const uri = aheadURI
	items, err := e.Inline(uri, fakeeditor.At(0, 6))
	if err != nil || len(items) != 1 || items[0].Command == nil {
		t.Fatalf("the editor's request: %+v %v", items, err)
	}
	base, _ := suggestsReceived(e)
	e.Edit(uri, 6, 6, items[0].InsertText) // the editor applies the item
	waitSuggests(t, e, base+1, "asked at the accept")
	time.Sleep(100 * time.Millisecond) // its answer is in
	e.Execute(*items[0].Command)
	e.waitAgent("nes/accept", func(m testagent.Message) bool { return m.Method == "nes/accept" })
	time.Sleep(100 * time.Millisecond) // a second one would have come by now
	accepts := 0
	var order []string
	for _, m := range e.theAgent().Received() {
		switch m.Method {
		case "nes/accept":
			accepts++
			order = append(order, m.Method)
		case "document/didChange", "nes/suggest":
			order = append(order, m.Method)
		}
	}
	if accepts != 1 {
		t.Errorf("the agent heard %d nes/accept, want 1", accepts)
	}
	if want := []string{"nes/suggest", "document/didChange", "nes/accept", "nes/suggest"}; !slices.Equal(order, want) {
		t.Errorf("the agent heard %v, want %v", order, want)
	}
	if log := e.logBuf.String(); strings.Contains(log, "not live") {
		t.Errorf("the accept command found the suggestion ended:\n%s", log)
	}
}

// TestAsksItselfAsksAheadFromTheFirstChange: an editor that says it asks by itself
// (initializationOptions.asksItself, the Neovim plugin and the VS Code extension) is asked ahead
// for from its first change, before it has asked once; one that says nothing is not, until it has.
func TestAsksItselfAsksAheadFromTheFirstChange(t *testing.T) {
	for _, says := range []bool{true, false} {
		a := &appendAtCursor{}
		e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: a.suggest}, cfg: lspside.Config{AskAhead: 20 * time.Millisecond}})
		e.InitializeWith(fakeeditor.InitParams{Root: e.root, Encodings: []string{"utf-16"}, Options: map[string]any{"suggestionReady": true, "asksItself": says}})
		e.WaitReady()
		e.Open(aheadURI, "x := f\n")
		e.Edit(aheadURI, 6, 6, "o")
		if says {
			waitSuggests(t, e, 1, "the first change of an editor that asks by itself")
			items, err := e.Inline(aheadURI, fakeeditor.At(0, 7))
			if err != nil || len(items) != 1 || items[0].InsertText != "()" {
				t.Fatalf("the editor's request: %+v %v, want the answer asked ahead", items, err)
			}
			if n, _ := suggestsReceived(e); n != 1 {
				t.Errorf("the agent received %d nes/suggest, want the one asked ahead", n)
			}
			continue
		}
		time.Sleep(200 * time.Millisecond)
		if n, _ := suggestsReceived(e); n != 0 {
			t.Errorf("an editor that said nothing: asked ahead %d times before it asked", n)
		}
	}
}

// TestJoinedAheadEndedWithoutAnswerAsksAnew: the editor's request joins the one asked ahead at
// its place; another request there (by hand) cancels that one before the agent answered it: the
// joined request asks anew and shows its answer, rather than answer nothing.
func TestJoinedAheadEndedWithoutAnswerAsksAnew(t *testing.T) {
	sc := newScripted()
	e := aheadEditor(t, sc.suggest, nil, 20*time.Millisecond, "x := f\n")
	base := editorAsksScripted(t, e, sc)
	e.Edit(aheadURI, 6, 6, "o")
	ahead := sc.nextCall(t) // asked ahead, held at the agent
	joined := e.inlineAsync(aheadURI, fakeeditor.At(0, 7))
	waitLogged(t, e, "the editor's request joins the one asked ahead")
	byHand := e.inlineAsyncTriggered(aheadURI, fakeeditor.At(0, 7), 1)
	select {
	case <-ahead.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the request asked ahead was not cancelled by the request by hand")
	}
	sc.answers <- insertAt("late", aheadURI, 0, 7, "()") // the cancelled one's answer, if it is read
	for i := 0; i < 2; i++ {
		c := sc.nextCall(t)
		sc.answers <- insertAt(fmt.Sprintf("s%d", i), aheadURI, c.req.Position.Line, c.req.Position.Character, "()")
	}
	r := waitResult(t, joined)
	if len(r.items) != 1 || r.items[0].InsertText != "()" {
		t.Errorf("the joined request: %+v %v, want the answer it asked anew", r.items, r.err)
	}
	waitResult(t, byHand)
	if n, _ := suggestsReceived(e); n != base+3 {
		t.Errorf("the agent received %d nes/suggest after the change, want 3: ahead, by hand, anew", n-base)
	}
}

// editorAsksScripted is editorAsks for a scripted agent: its answer is none.
func editorAsksScripted(t *testing.T, e *editor, sc *scripted) int {
	t.Helper()
	res := e.inlineAsync(aheadURI, fakeeditor.At(0, 0))
	sc.nextCall(t)
	sc.answers <- map[string]any{"suggestions": []any{}}
	waitResult(t, res)
	n, _ := suggestsReceived(e)
	return n
}

// waitLogged waits until the bridge's log has msg.
func waitLogged(t *testing.T, e *editor, msg string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(e.logBuf.String(), msg) {
		if time.Now().After(deadline) {
			t.Fatalf("the bridge never logged %q", msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
