package lspside_test

import (
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

// TestPartlyTakenThenElsewhere: the rule of how a suggestion ends when the user takes only part of
// it. Taking (or typing) its start, then changing other text: nes/reject "replaced". Changing other
// text without having taken any of it: "ignored". Taking the rest: nes/accept, never a reject.
func TestPartlyTakenThenElsewhere(t *testing.T) {
	const uri = "file:///work/project/p.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(uri, "hello\nother\n")

	show := func(id, text string) {
		t.Helper()
		res := e.inlineAsync(uri, fakeeditor.At(0, 5))
		sc.nextCall(t)
		sc.answers <- insertAt(id, uri, 0, 5, text)
		if r := waitResult(t, res); len(r.items) != 1 {
			t.Fatalf("%s not shown: %+v %v", id, r.items, r.err)
		}
	}

	// Part taken (" w" of " world"), then the user edits the other line: replaced.
	show("p1", " world")
	e.ChangeAt(uri, 2, fakeeditor.Insert(fakeeditor.At(0, 5), " w"))
	e.ChangeAt(uri, 3, fakeeditor.Insert(fakeeditor.At(1, 5), "!"))
	e.waitAgent("nes/reject p1 replaced", rejectOf("p1", acp.UnstableNesRejectReasonReplaced))

	// Nothing taken, the other line edited: ignored.
	e.ChangeAt(uri, 4, fakeeditor.Replace(fakeeditor.At(0, 5), fakeeditor.At(0, 7), ""))
	show("p2", " there")
	e.ChangeAt(uri, 5, fakeeditor.Insert(fakeeditor.At(1, 6), "?"))
	e.waitAgent("nes/reject p2 ignored", rejectOf("p2", acp.UnstableNesRejectReasonIgnored))

	checkEndedOnce(t, e, "p1", "p2")
}
