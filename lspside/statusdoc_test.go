package lspside_test

import (
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// TestStatusFollowsWhereTheUserIs: in an editor that sends no focus notification (lsp-mode, Helix,
// Kakoune), the status is about the document the user last changed or asked in. A change moves it
// there, and so does a request the user made by hand or an inline request at the cursor; a code
// action the editor asks for by itself (for every visible document, or with no trigger kind) does
// not, nor one for a document kept from the agent. Once the editor says where the user is
// (acp-lsp-bridge/didFocus), a change elsewhere does not move it.
func TestStatusFollowsWhereTheUserIs(t *testing.T) {
	ws, _ := beside(t, map[string]string{"ws/a.go": "a := 1\n", "ws/b.go": "b := 2\n", "ws/.env": "KEY=sk-0\n"})
	root := workspace.Host.FileURI(ws)
	a, b, env := root+"/a.go", root+"/b.go", root+"/.env"
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16"}})
	e.root = root
	e.initialize("utf-16")
	e.WaitReady()
	e.Await(fakeeditor.StatusIs(lspside.StatusReady, ""))
	e.Open(a, "a := 1\n")
	e.Open(b, "b := 2\n")
	e.Open(env, "KEY=sk-0\n")

	// about is the document the status is about now: the switch turned off for every document
	// makes the bridge say "off" of it, whatever it said before; then the switch is on again.
	about := func() string {
		t.Helper()
		switched := func(command, state string) fakeeditor.Status {
			n := len(e.Record().Statuses)
			e.Execute(switchCmd(command))
			var got fakeeditor.Status
			e.Await(fakeeditor.Expectation{Description: "a status " + state + " after the switch", Met: func(r *fakeeditor.Record) bool {
				for _, st := range r.Statuses[min(n, len(r.Statuses)):] {
					if st.State == state {
						got = st
						return true
					}
				}
				return false
			}})
			return got
		}
		st := switched(lspside.CommandDisable, lspside.StatusOff)
		switched(lspside.CommandEnable, lspside.StatusReady)
		return st.URI
	}
	want := func(step, uri string) {
		t.Helper()
		if got := about(); got != uri {
			t.Errorf("%s: the status is about %q, want %q", step, got, uri)
		}
	}
	codeAction := func(uri string, trigger int) {
		t.Helper()
		if _, err := e.CodeActionsTriggered(uri, fakeeditor.Span(fakeeditor.At(0, 0), fakeeditor.At(0, 0)), trigger); err != nil {
			t.Fatal(err)
		}
	}

	e.Edit(a, 6, 6, "\n")
	want("a change of a.go", a)
	codeAction(b, 2)
	want("an automatic code action for b.go", a)
	codeAction(b, 0)
	want("a code action for b.go without a trigger kind", a)
	codeAction(env, 2)
	want("an automatic code action for .env", a)
	codeAction(b, 1)
	want("a code action the user asked for in b.go", b)
	if _, err := e.InlineTriggered(a, fakeeditor.At(1, 0), 2); err != nil {
		t.Fatal(err)
	}
	want("an inline request while typing in a.go", a)
	e.Edit(env, 0, 0, "#")
	e.Await(fakeeditor.StatusIs(lspside.StatusExcluded, env))
	e.Edit(b, 0, 0, "//")
	want("a change of b.go after .env", b)

	// The editor says where the user is: from now on a change elsewhere (a rename across files, a
	// plugin's edit) does not move the status.
	e.Notify(lspside.NotifyDidFocus, map[string]any{"textDocument": map[string]any{"uri": a}, "position": fakeeditor.At(0, 0)})
	e.Await(fakeeditor.StatusIs(lspside.StatusReady, a))
	e.Edit(b, 0, 0, "//")
	want("a change of b.go in an editor that tells the focus", a)
}
