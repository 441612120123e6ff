package lspside_test

import (
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

// editsAnswer answers with one edit suggestion of edits, each {line, from, to, text} on one line,
// said to be growing (the model still writes its answer) or not.
func editsAnswer(id, uri string, growing bool, edits ...[4]any) any {
	var es []any
	for _, e := range edits {
		es = append(es, map[string]any{"range": map[string]any{
			"start": map[string]any{"line": e[0], "character": e[1]},
			"end":   map[string]any{"line": e[0], "character": e[2]},
		}, "newText": e[3]})
	}
	a := map[string]any{"suggestions": []any{map[string]any{"kind": "edit", "id": id, "uri": uri, "edits": es}}}
	if growing {
		a["_meta"] = map[string]any{"acp-lsp-bridge/growing": true}
	}
	return a
}

// TestGrowingAnswerIsShownAsItGrows: an answer the agent says is growing is asked again at the
// same version and place; each answer replaces what is shown of it on every surface but ghost
// text (which keeps the part at the cursor), the editor is told each time, and the editor's own
// requests there are answered from it without asking the agent. Once the answer has ended, it is
// asked no more.
func TestGrowingAnswerIsShownAsItGrows(t *testing.T) {
	const uri = "file:///work/project/g.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest}})
	e.InitializeWith(fakeeditor.InitParams{Root: e.root, Encodings: []string{"utf-16"}, Options: map[string]any{"suggestionReady": true}})
	e.WaitReady()
	const text = "a := 1\nb := 2\nc := 3\n"
	e.Open(uri, text)
	at := fakeeditor.At(0, 6)

	res := e.inlineAsync(uri, at)
	first := sc.nextCall(t)
	sc.answers <- editsAnswer("s1", uri, true, [4]any{0, 5, 6, "10"})
	if r := waitResult(t, res); len(r.items) != 1 || r.items[0].InsertText != "10" {
		t.Fatalf("the first part: %+v %v", r.items, r.err)
	}
	ready := func(n int) {
		t.Helper()
		e.Await(fakeeditor.Expectation{Description: "suggestionReady", Met: func(r *fakeeditor.Record) bool { return len(r.Ready) >= n }})
	}
	// The bridge asks again at the same version and place.
	again := sc.nextCall(t)
	if again.req.Version != first.req.Version || again.req.Position != first.req.Position {
		t.Fatalf("asked again at version %d %+v, want %d %+v", again.req.Version, again.req.Position, first.req.Version, first.req.Position)
	}
	sc.answers <- editsAnswer("s2", uri, true, [4]any{0, 5, 6, "10"}, [4]any{2, 5, 6, "30"})
	ready(1)
	edits, err := e.InlineEdits(uri, at)
	if err != nil || len(edits) != 1 {
		t.Fatalf("copilotInlineEdit after the answer grew: %+v %v", edits, err)
	}
	if got, _ := fakeeditor.ApplyEdits(text, []fakeeditor.TextEdit{{Range: edits[0].Range, NewText: edits[0].Text}}, encoding.UTF16); got != "a := 10\nb := 2\nc := 30\n" {
		t.Errorf("copilotInlineEdit shows a change making %q, want both parts", got)
	}
	if items, err := e.Inline(uri, at); err != nil || len(items) != 1 || items[0].InsertText != "10" {
		t.Errorf("ghost text after the answer grew: %+v %v, want the part at the cursor", items, err)
	}
	actions, err := e.CodeActions(uri, fakeeditor.Range{Start: at, End: at})
	if err != nil || len(actions) != 1 {
		t.Fatalf("code actions after the answer grew: %+v %v, want one, the grown suggestion", actions, err)
	}

	// The answer ends: the whole of it replaces the part shown, which ends as replaced.
	sc.nextCall(t)
	sc.answers <- editsAnswer("s3", uri, false, [4]any{0, 5, 6, "10"}, [4]any{1, 5, 6, "20"}, [4]any{2, 5, 6, "30"})
	ready(2)
	e.waitAgent("nes/reject s2 replaced", rejectOf("s2", acp.UnstableNesRejectReasonReplaced))
	edits, err = e.InlineEdits(uri, at)
	if err != nil || len(edits) != 1 {
		t.Fatalf("copilotInlineEdit after the answer ended: %+v %v", edits, err)
	}
	if got, _ := fakeeditor.ApplyEdits(text, []fakeeditor.TextEdit{{Range: edits[0].Range, NewText: edits[0].Text}}, encoding.UTF16); got != "a := 10\nb := 20\nc := 30\n" {
		t.Errorf("copilotInlineEdit after the answer ended makes %q, want the whole answer", got)
	}
	if edits[0].Command == nil || len(edits[0].Command.Arguments) != 1 || edits[0].Command.Arguments[0] != "s3" {
		t.Errorf("copilotInlineEdit's command %+v, want the accept of s3", edits[0].Command)
	}
	select {
	case c := <-sc.asked:
		t.Errorf("asked again after the answer ended: %+v", c.req)
	case <-time.After(100 * time.Millisecond):
	}
	if n, _ := suggestsReceived(e); n != 3 {
		t.Errorf("the agent received %d nes/suggest, want 3: the editor's, and two following its answer", n)
	}
}

// TestSameTextAndPlaceAsksOnce: an automatic request at the same text and position as a live
// suggestion (copilotInlineEdit again, as the plugins send on cursor moves; inline completion) is
// answered from it: the agent is asked once. A request by hand, or elsewhere, asks.
func TestSameTextAndPlaceAsksOnce(t *testing.T) {
	a := &appendAtCursor{}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: a.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	const uri = "file:///work/project/o.go"
	e.Open(uri, "x := f\n")
	at := fakeeditor.At(0, 6)
	for i := 0; i < 2; i++ {
		if edits, err := e.InlineEdits(uri, at); err != nil || len(edits) != 1 || edits[0].Text != "()" {
			t.Fatalf("copilotInlineEdit %d: %+v %v", i+1, edits, err)
		}
	}
	if items, err := e.InlineTriggered(uri, at, 2); err != nil || len(items) != 1 || items[0].InsertText != "()" {
		t.Fatalf("inline completion: %+v %v", items, err)
	}
	if n, _ := suggestsReceived(e); n != 1 {
		t.Errorf("the agent received %d nes/suggest, want 1", n)
	}
	// By hand, or elsewhere, the agent is asked.
	if _, err := e.InlineTriggered(uri, at, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.InlineEdits(uri, fakeeditor.At(0, 2)); err != nil {
		t.Fatal(err)
	}
	if n, _ := suggestsReceived(e); n != 3 {
		t.Errorf("after a request by hand and one elsewhere the agent received %d nes/suggest, want 3", n)
	}
}
