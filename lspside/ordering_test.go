package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"context"
	"encoding/json"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

// scripted lets a test hold each nes/suggest at the agent and choose its answer.
type scripted struct {
	asked   chan scriptedCall
	answers chan any
}

type scriptedCall struct {
	req acp.UnstableSuggestNesRequest
	doc string
	ctx context.Context
}

func newScripted() *scripted {
	return &scripted{asked: make(chan scriptedCall, 10), answers: make(chan any, 10)}
}

func (s *scripted) suggest(ctx context.Context, req acp.UnstableSuggestNesRequest, doc string) (any, *acp.RequestError) {
	s.asked <- scriptedCall{req, doc, ctx}
	return <-s.answers, nil
}

func (s *scripted) nextCall(t *testing.T) scriptedCall {
	t.Helper()
	select {
	case c := <-s.asked:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("the agent was never asked for a suggestion")
		return scriptedCall{}
	}
}

// insertAt answers with one edit suggestion inserting text at a position.
func insertAt(id, uri string, line, char int, text string) any {
	p := map[string]any{"line": line, "character": char}
	return map[string]any{"suggestions": []any{map[string]any{
		"kind": "edit", "id": id, "uri": uri,
		"edits": []any{map[string]any{"range": map[string]any{"start": p, "end": p}, "newText": text}},
	}}}
}

type inlineResult struct {
	items []fakeeditor.InlineItem
	err   error
}

func (e *editor) inlineAsync(uri string, p fakeeditor.Pos) chan inlineResult {
	return e.inlineAsyncTriggered(uri, p, 2)
}

// inlineAsyncTriggered is inlineAsync with this triggerKind (1 invoked, 2 automatic).
func (e *editor) inlineAsyncTriggered(uri string, p fakeeditor.Pos, triggerKind int) chan inlineResult {
	ch := make(chan inlineResult, 1)
	go func() {
		items, err := e.InlineTriggered(uri, p, triggerKind)
		ch <- inlineResult{items, err}
	}()
	return ch
}

func waitResult(t *testing.T, ch chan inlineResult) inlineResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the inline completion request")
		return inlineResult{}
	}
}

// TestOrderingStaleAndCancel: open → change → request → change → answer → the stale result is
// dropped → a cancelled request answers -32800 at once, its agent request is cancelled, and the
// ids the agent still returns end as cancelled.
func TestOrderingStaleAndCancel(t *testing.T) {
	const uri = "file:///work/project/a.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest}})
	e.initialize("utf-16") // call id 1
	e.WaitReady()
	e.Open(uri, "abc\n")                                                                  //
	e.ChangeAt(uri, 2, fakeeditor.Replace(fakeeditor.At(0, 3), fakeeditor.At(0, 3), "d")) // abcd

	res := e.inlineAsync(uri, fakeeditor.At(0, 4)) // call id 2
	call := sc.nextCall(t)
	if call.req.Version != 2 || call.doc != "abcd\n" || call.req.Position.Character != 4 {
		t.Fatalf("the agent was asked about version %d at %+v with text %q", call.req.Version, call.req.Position, call.doc)
	}
	e.ChangeAt(uri, 3, fakeeditor.Replace(fakeeditor.At(0, 4), fakeeditor.At(0, 4), "e")) // abcde: the request is now stale
	e.waitMirror(uri, "abcde\n")
	sc.answers <- insertAt("s1", uri, 0, 4, "X")
	r := waitResult(t, res)
	if r.err != nil || len(r.items) != 0 {
		t.Fatalf("stale answer shown: items %+v err %v", r.items, r.err)
	}
	e.waitAgent("nes/reject s1 ignored", rejectOf("s1", acp.UnstableNesRejectReasonIgnored))

	res = e.inlineAsync(uri, fakeeditor.At(0, 5)) // call id 3
	call = sc.nextCall(t)
	e.Notify("$/cancelRequest", map[string]any{"id": 3})
	r = waitResult(t, res) // answered while the agent still holds the request
	if rpcCode(r.err) != -32800 {
		t.Fatalf("cancelled request answered %+v, %v; want error -32800", r.items, r.err)
	}
	select {
	case <-call.ctx.Done(): // the agent saw $/cancel_request
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's request was not cancelled")
	}
	sc.answers <- insertAt("s2", uri, 0, 5, "Y")
	e.waitAgent("nes/reject s2 cancelled", rejectOf("s2", acp.UnstableNesRejectReasonCancelled))

	// The bridge still serves: a fresh request is shown.
	res = e.inlineAsync(uri, fakeeditor.At(0, 5))
	sc.nextCall(t)
	sc.answers <- insertAt("s3", uri, 0, 5, "Z")
	r = waitResult(t, res)
	if r.err != nil || len(r.items) != 1 || r.items[0].InsertText != "Z" {
		t.Fatalf("fresh request: items %+v err %v", r.items, r.err)
	}
	checkEndedOnce(t, e, "s1", "s2")
}

func checkEndedOnce(t *testing.T, e *editor, ids ...string) {
	t.Helper()
	counts := ended(e.agent.Received())
	for _, id := range ids {
		if counts[id] != 1 {
			t.Errorf("suggestion %s ended %d times, want once", id, counts[id])
		}
	}
}

// TestLifecycleReplacedIgnoredAccepted: every id ends exactly once, with the right reason.
func TestLifecycleReplacedIgnoredAccepted(t *testing.T) {
	const uri = "file:///work/project/b.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-8", Suggest: sc.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(uri, "hello\n")

	// s1 shown, then superseded by the answer to the next request for the same document:
	// replaced (sent after that answer, off the request's way). The next request is invoked by
	// hand: an automatic one at the same text and position is answered with s1 itself.
	res := e.inlineAsync(uri, fakeeditor.At(0, 5))
	sc.nextCall(t)
	sc.answers <- insertAt("s1", uri, 0, 5, " world")
	if r := waitResult(t, res); len(r.items) != 1 {
		t.Fatalf("s1 not shown: %+v %v", r.items, r.err)
	}
	if r := waitResult(t, e.inlineAsync(uri, fakeeditor.At(0, 5))); len(r.items) != 1 || r.items[0].InsertText != " world" {
		t.Fatalf("asked again at the same text and position: %+v %v, want s1 without asking the agent", r.items, r.err)
	}
	res = e.inlineAsyncTriggered(uri, fakeeditor.At(0, 5), 1)
	sc.nextCall(t)
	sc.answers <- insertAt("s2", uri, 0, 5, " there")
	if r := waitResult(t, res); len(r.items) != 1 {
		t.Fatalf("s2 not shown: %+v %v", r.items, r.err)
	}
	e.waitAgent("nes/reject s1 replaced", rejectOf("s1", acp.UnstableNesRejectReasonReplaced))

	// Typing the start of s2 keeps it; typing something else invalidates it: ignored.
	e.ChangeAt(uri, 2, fakeeditor.Replace(fakeeditor.At(0, 5), fakeeditor.At(0, 5), " t"))
	e.ChangeAt(uri, 3, fakeeditor.Replace(fakeeditor.At(0, 7), fakeeditor.At(0, 7), "x"))
	e.waitAgent("nes/reject s2 ignored", rejectOf("s2", acp.UnstableNesRejectReasonIgnored))

	// s3 shown, applied by the editor, then accepted.
	res = e.inlineAsync(uri, fakeeditor.At(0, 8))
	sc.nextCall(t)
	sc.answers <- insertAt("s3", uri, 0, 8, "yz")
	r := waitResult(t, res)
	if len(r.items) != 1 {
		t.Fatalf("s3 not shown: %+v %v", r.items, r.err)
	}
	e.ChangeAt(uri, 4, fakeeditor.Replace(fakeeditor.At(0, 8), fakeeditor.At(0, 8), "yz"))
	e.MustCall("workspace/executeCommand", map[string]any{"command": r.items[0].Command.Command, "arguments": r.items[0].Command.Arguments}, nil)
	e.waitAgent("nes/accept s3", func(m testagent.Message) bool {
		var p acp.UnstableAcceptNesNotification
		return m.Method == "nes/accept" && json.Unmarshal(m.Params, &p) == nil && p.Id == "s3"
	})
	// Accepting again does not end it twice.
	e.MustCall("workspace/executeCommand", map[string]any{"command": r.items[0].Command.Command, "arguments": r.items[0].Command.Arguments}, nil)

	// s4 shown, then the document is closed: ignored. s5 is live at shutdown: ignored.
	res = e.inlineAsync(uri, fakeeditor.At(0, 10))
	sc.nextCall(t)
	sc.answers <- insertAt("s4", uri, 0, 10, "!")
	waitResult(t, res)
	e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	e.waitAgent("nes/reject s4 ignored", rejectOf("s4", acp.UnstableNesRejectReasonIgnored))
	e.Open(uri, "again\n")
	res = e.inlineAsync(uri, fakeeditor.At(0, 5))
	sc.nextCall(t)
	sc.answers <- insertAt("s5", uri, 0, 5, "!")
	waitResult(t, res)
	e.MustCall("shutdown", nil, nil)
	e.waitAgent("nes/reject s5 ignored", rejectOf("s5", acp.UnstableNesRejectReasonIgnored))
	checkEndedOnce(t, e, "s1", "s2", "s3", "s4", "s5")
}

// TestInvalidSuggestionsAreDropped: out-of-range, overlapping and off-line edits are not shown.
func TestInvalidSuggestionsAreDropped(t *testing.T) {
	const uri = "file:///work/project/c.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(uri, "one\ntwo\n")
	edit := func(id string, edits ...[5]any) map[string]any {
		var es []any
		for _, x := range edits {
			es = append(es, map[string]any{"range": map[string]any{
				"start": map[string]any{"line": x[0], "character": x[1]},
				"end":   map[string]any{"line": x[2], "character": x[3]},
			}, "newText": x[4]})
		}
		return map[string]any{"kind": "edit", "id": id, "uri": uri, "edits": es}
	}
	res := e.inlineAsync(uri, fakeeditor.At(0, 3))
	sc.nextCall(t)
	sc.answers <- map[string]any{"suggestions": []any{
		edit("out-of-range", [5]any{7, 0, 7, 1, "x"}),
		edit("overlap", [5]any{0, 0, 0, 2, "a"}, [5]any{0, 1, 0, 3, "b"}),
		edit("reversed", [5]any{0, 3, 0, 1, "x"}),
		edit("other-line", [5]any{1, 0, 1, 3, "TWO"}),
		map[string]any{"kind": "teleport", "id": "unknown-kind"},
		edit("good", [5]any{0, 3, 0, 3, "!"}),
	}}
	r := waitResult(t, res)
	if r.err != nil || len(r.items) != 1 || r.items[0].InsertText != "!" {
		t.Fatalf("items %+v err %v, want only the good one", r.items, r.err)
	}
	for _, id := range []string{"out-of-range", "overlap", "reversed", "unknown-kind"} {
		e.waitAgent("nes/reject "+id, rejectOf(id, acp.UnstableNesRejectReasonIgnored))
	}
	// other-line is kept for other surfaces until the document moves on.
	e.ChangeAt(uri, 2, fakeeditor.Replace(fakeeditor.At(1, 0), fakeeditor.At(1, 0), "#"))
	e.waitAgent("nes/reject other-line", rejectOf("other-line", acp.UnstableNesRejectReasonIgnored))
	e.waitAgent("nes/reject good", rejectOf("good", acp.UnstableNesRejectReasonIgnored))
	checkEndedOnce(t, e, "out-of-range", "overlap", "reversed", "unknown-kind", "other-line", "good")
}

// TestTriggerKind: an invoked inline completion asks the agent with triggerKind manual, an
// automatic one (or one without context) with automatic.
func TestTriggerKind(t *testing.T) {
	const uri = "file:///work/project/t.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Suggest: sc.suggest}})
	e.initialize()
	e.WaitReady()
	e.Open(uri, "x\n")
	for _, tc := range []struct {
		context any
		want    acp.UnstableNesTriggerKind
	}{
		{map[string]any{"triggerKind": 1}, acp.UnstableNesTriggerKindManual},
		{map[string]any{"triggerKind": 2}, acp.UnstableNesTriggerKindAutomatic},
		{nil, acp.UnstableNesTriggerKindAutomatic},
	} {
		done := make(chan error, 1)
		go func() {
			params := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": fakeeditor.At(0, 1)}
			if tc.context != nil {
				params["context"] = tc.context
			}
			done <- e.Call("textDocument/inlineCompletion", params, nil)
		}()
		if got := sc.nextCall(t).req.TriggerKind; got != tc.want {
			t.Errorf("context %v: triggerKind %q, want %q", tc.context, got, tc.want)
		}
		sc.answers <- map[string]any{"suggestions": []any{}}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestAppliedWithoutCommandEndsAccepted: a client that applies a suggestion without running its
// accept command (copilot-lsp.nvim) still reports it as accepted when it ends.
func TestAppliedWithoutCommandEndsAccepted(t *testing.T) {
	const uri = "file:///work/project/ap.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest, DidFocus: true}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(uri, "ab\n")
	res := e.inlineAsync(uri, fakeeditor.At(0, 2))
	sc.nextCall(t)
	sc.answers <- insertAt("a1", uri, 0, 2, "c")
	waitResult(t, res)
	e.ChangeAt(uri, 2, fakeeditor.Replace(fakeeditor.At(0, 2), fakeeditor.At(0, 2), "c")) // applied, no command
	res = e.inlineAsync(uri, fakeeditor.At(0, 3))                                         // the next request supersedes it
	sc.nextCall(t)
	sc.answers <- map[string]any{"suggestions": []any{}}
	waitResult(t, res)
	e.waitAgent("nes/accept a1", func(m testagent.Message) bool {
		var p acp.UnstableAcceptNesNotification
		return m.Method == "nes/accept" && json.Unmarshal(m.Params, &p) == nil && p.Id == "a1"
	})
	checkEndedOnce(t, e, "a1")

	// The first request told the agent where the user is (an inferred focus, sent when the agent
	// became ready), and Copilot's didFocus carries the document's last request position.
	first := e.waitAgent("document/didFocus", method("document/didFocus"))
	var p acp.UnstableDidFocusDocumentNotification
	if err := json.Unmarshal(first.Params, &p); err != nil || p.Position.Character != 2 || p.Version != 1 {
		t.Errorf("first didFocus %s", first.Params)
	}
	e.Notify("textDocument/didFocus", map[string]any{"textDocument": map[string]any{"uri": uri}})
	e.waitAgent("document/didFocus at 0:3 of version 2", func(m testagent.Message) bool {
		var p acp.UnstableDidFocusDocumentNotification
		return m.Method == "document/didFocus" && json.Unmarshal(m.Params, &p) == nil &&
			p.Position.Line == 0 && p.Position.Character == 3 && p.Version == 2
	})
}

// A newer request for a document supersedes the one still in flight: the older editor request
// gets an empty result at once, the agent's request is cancelled, and the ids it still returns end
// as cancelled. At most one nes/suggest per document is in flight.
func TestNewerRequestSupersedesTheOneInFlight(t *testing.T) {
	const uri = "file:///work/project/co.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(uri, "ab\n")
	first := e.inlineAsync(uri, fakeeditor.At(0, 1))
	call1 := sc.nextCall(t)
	second := e.inlineAsync(uri, fakeeditor.At(0, 2))
	if r := waitResult(t, first); r.err != nil || len(r.items) != 0 {
		t.Fatalf("the superseded request: %+v, %v; want an empty result", r.items, r.err)
	}
	select {
	case <-call1.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the agent's first nes/suggest was not cancelled")
	}
	call2 := sc.nextCall(t)
	if call2.req.Position.Character != 2 {
		t.Errorf("second nes/suggest at %+v", call2.req.Position)
	}
	// The agent answers both; the first answer is late.
	sc.answers <- insertAt("old", uri, 0, 1, "x")
	sc.answers <- insertAt("new", uri, 0, 2, "y")
	if r := waitResult(t, second); r.err != nil || len(r.items) != 1 || r.items[0].InsertText != "y" {
		t.Fatalf("the newer request: %+v, %v", r.items, r.err)
	}
	e.waitAgent("nes/reject old cancelled", rejectOf("old", acp.UnstableNesRejectReasonCancelled))
	checkEndedOnce(t, e, "old")
}
