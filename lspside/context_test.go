package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"context"
	"encoding/json"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

func intp(n int) *int { return &n }

// lastSuggest returns the params of the last nes/suggest the agent received.
func lastSuggest(t *testing.T, e *editor) acp.UnstableSuggestNesRequest {
	t.Helper()
	var p acp.UnstableSuggestNesRequest
	for _, m := range e.agent.Received() {
		if m.Method == acp.AgentMethodNesSuggest {
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return p
}

// The context of nes/suggest carries what the agent asked for, from the editing session: the
// files, the grouped edit, the user's actions, the diagnostics the editor configuration sent, and
// where the user focused.
func TestSuggestContextFromTheSession(t *testing.T) {
	const a, b = "file:///work/project/a.go", "file:///work/project/b.go"
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-8", DidFocus: true, Context: &acp.NesContextCapabilities{
		OpenFiles: &acp.NesOpenFilesCapabilities{}, RecentFiles: &acp.NesRecentFilesCapabilities{MaxCount: intp(5)},
		EditHistory: &acp.NesEditHistoryCapabilities{MaxCount: intp(3)}, UserActions: &acp.NesUserActionsCapabilities{MaxCount: intp(4)},
		Diagnostics: &acp.NesDiagnosticsCapabilities{}, RelatedSnippets: &acp.NesRelatedSnippetsCapabilities{},
	}}})
	e.initialize("utf-16")
	e.Open(a, "package a\n\nfunc Compute(x int) int { return x }\n")
	e.Open(b, "package b\n\nvar s = \"日本\"\n")
	e.waitMirror(b, "package b\n\nvar s = \"日本\"\n")
	e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": a}, "position": fakeeditor.At(2, 5),
		"visibleRange": map[string]any{"start": fakeeditor.At(0, 0), "end": fakeeditor.At(40, 0)}})
	e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": b}, "position": fakeeditor.At(2, 12)})
	// Type "; y = Compute(1)" after the string, one character at a time.
	typed := "; y = Compute(1)"
	col := 12 // utf-16: `var s = "日本"` is 12 units
	for i, r := range typed {
		e.ChangeAt(b, 2+i, fakeeditor.Replace(fakeeditor.At(2, col), fakeeditor.At(2, col), string(r)))
		col++
	}
	e.Notify("acp-lsp-bridge/diagnostics", map[string]any{"textDocument": map[string]any{"uri": b}, "diagnostics": []any{
		map[string]any{"range": map[string]any{"start": fakeeditor.At(2, 14), "end": fakeeditor.At(2, 15)}, "severity": 1, "message": "undefined: y"},
	}})
	if _, err := e.Inline(b, fakeeditor.At(2, col)); err != nil {
		t.Fatal(err)
	}
	p := lastSuggest(t, e)
	if p.Context == nil {
		t.Fatal("no context")
	}
	c := p.Context
	if len(c.OpenFiles) != 2 || c.OpenFiles[0].Uri != b || c.OpenFiles[1].Uri != a || c.OpenFiles[1].VisibleRange == nil || c.OpenFiles[1].VisibleRange.End.Line != 3 {
		t.Errorf("openFiles %+v: want b (focused last) then a with lines 0–3 visible (clamped to the text)", c.OpenFiles)
	}
	if len(c.RecentFiles) != 1 || c.RecentFiles[0].Uri != a || !strings.Contains(c.RecentFiles[0].Text, "func Compute") {
		t.Errorf("recentFiles %+v: want a.go with its text", c.RecentFiles)
	}
	if len(c.EditHistory) != 1 || !strings.Contains(c.EditHistory[0].Diff, "-var s = \"日本\"\n+var s = \"日本\"; y = Compute(1)\n") || !strings.Contains(c.EditHistory[0].Diff, "--- a/b.go") {
		t.Errorf("editHistory %+v: want the typing as one entry", c.EditHistory)
	}
	if len(c.UserActions) != 4 {
		t.Errorf("userActions %+v: want the last 4 (maxCount)", c.UserActions)
	} else if last := c.UserActions[3]; last.Action != "insertChar" || last.Position.Character != len(`var s = "日本"; y = Compute(1)`) {
		t.Errorf("last action %+v: want insertChar at the utf-8 column after the typing", last)
	}
	if len(c.Diagnostics) != 1 || c.Diagnostics[0].Message != "undefined: y" || c.Diagnostics[0].Range.Start.Character != 18 {
		t.Errorf("diagnostics %+v: want the editor's, at utf-8 column 18", c.Diagnostics)
	}
	if len(c.RelatedSnippets) != 1 || c.RelatedSnippets[0].Uri != a || !strings.Contains(c.RelatedSnippets[0].Excerpts[0].Text, "func Compute") {
		t.Errorf("relatedSnippets %+v: want the definition of Compute in a.go", c.RelatedSnippets)
	}
	// Focus reached the agent, with the visible range.
	var focusA acp.UnstableDidFocusDocumentNotification
	for _, m := range e.agent.Received() {
		if m.Method == acp.AgentMethodDocumentDidFocus && strings.Contains(string(m.Params), "a.go") {
			_ = json.Unmarshal(m.Params, &focusA)
			break
		}
	}
	if focusA.Position.Line != 2 || focusA.Position.Character != 5 || focusA.VisibleRange.End.Line != 3 {
		t.Errorf("document/didFocus for a.go %+v", focusA)
	}
}

// TestRecentFilesWithoutFocus: an editor that never says where the user is (Helix, Kakoune,
// Neovim without the plugin's setup() send no focus notification) still gives the agent the files
// its user opened to look at: in recentFiles, after those worked in, and in
// workspace/recent_documents, closed ones too.
func TestRecentFilesWithoutFocus(t *testing.T) {
	const a, b, c, d = "file:///work/project/a.go", "file:///work/project/b.go", "file:///work/project/c.go", "file:///work/project/d.go"
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", DidFocus: true, Context: &acp.NesContextCapabilities{
		RecentFiles: &acp.NesRecentFilesCapabilities{MaxCount: intp(10)},
	}}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(a, "package a // 日本\n")
	e.Open(b, "package b\n")
	e.Open(c, "package c\n")
	e.Open(d, "package d\n")
	e.ChangeAt(a, 2, fakeeditor.Replace(fakeeditor.At(0, 9), fakeeditor.At(0, 9), "x"))
	e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": d}})
	e.waitAgent("document/didClose", method(acp.AgentMethodDocumentDidClose))
	if _, err := e.Inline(c, fakeeditor.At(0, 9)); err != nil {
		t.Fatal(err)
	}
	p := lastSuggest(t, e)
	var got []string
	if p.Context != nil {
		for _, f := range p.Context.RecentFiles {
			got = append(got, f.Uri+" "+f.Text)
		}
	}
	// a was edited; b was opened; c is the request's document; d is closed.
	want := []string{a + " package ax // 日本\n", b + " package b\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("recentFiles %q, want %q", got, want)
	}
	raw, err := e.agent.Call(context.Background(), "workspace/recent_documents", map[string]any{"sessionId": "test-session"})
	if err != nil {
		t.Fatal(err)
	}
	// c was focused by the request, a edited, then d and b as they were opened, the last first.
	if got, want := string(raw), `{"documents":[`+
		`{"uri":"file:///work/project/c.go","languageId":"go"},{"uri":"file:///work/project/a.go","languageId":"go"},`+
		`{"uri":"file:///work/project/d.go","languageId":"go"},{"uri":"file:///work/project/b.go","languageId":"go"}]}`; got != want {
		t.Errorf("recent_documents %s, want %s", got, want)
	}
}

// An agent that asks for no context gets none; one that asks only for diagnostics gets no other key.
func TestSuggestContextOnlyWhatWasAsked(t *testing.T) {
	const u = "file:///work/project/c.go"
	for _, tc := range []struct {
		name string
		caps *acp.NesContextCapabilities
		want string
	}{
		{"none", nil, ""},
		{"diagnostics only", &acp.NesContextCapabilities{Diagnostics: &acp.NesDiagnosticsCapabilities{}}, `"diagnostics"`},
		{"editHistory only", &acp.NesContextCapabilities{EditHistory: &acp.NesEditHistoryCapabilities{}}, `"editHistory"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Context: tc.caps}})
			e.initialize("utf-16")
			e.WaitReady()
			e.Open(u, "ab\n")
			e.ChangeAt(u, 2, fakeeditor.Replace(fakeeditor.At(0, 2), fakeeditor.At(0, 2), "c"))
			e.Notify("acp-lsp-bridge/diagnostics", map[string]any{"textDocument": map[string]any{"uri": u}, "diagnostics": []any{
				map[string]any{"range": map[string]any{"start": fakeeditor.At(0, 0), "end": fakeeditor.At(0, 1)}, "severity": 2, "message": "w"},
			}})
			if _, err := e.Inline(u, fakeeditor.At(0, 3)); err != nil {
				t.Fatal(err)
			}
			var raw json.RawMessage
			for _, m := range e.agent.Received() {
				if m.Method == acp.AgentMethodNesSuggest {
					raw = m.Params
				}
			}
			var p struct {
				Context map[string]json.RawMessage `json:"context"`
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if p.Context != nil {
					t.Errorf("context %s sent to an agent that asked for none", raw)
				}
				return
			}
			if len(p.Context) != 1 || !strings.Contains(string(raw), tc.want) {
				t.Errorf("nes/suggest %s: want only %s", raw, tc.want)
			}
		})
	}
}

// workspace/open_documents, recent_documents and active_document answer from the editor's state.
func TestEditorStateMethods(t *testing.T) {
	const a, b, c = "file:///work/project/a.go", "file:///work/project/b.go", "file:///work/project/c.go"
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16"}})
	e.initialize("utf-16")
	// Ready, not only asked for nes/start: a document closed before the agent is ready never
	// reaches it, so neither would its didClose.
	e.WaitReady()
	ctx := context.Background()
	call := func(method string, params any) string {
		t.Helper()
		raw, err := e.agent.Call(ctx, method, params)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return string(raw)
	}
	if got := call("workspace/active_document", map[string]any{"sessionId": "test-session"}); got != `{"document":null}` {
		t.Errorf("active_document with nothing open: %s", got)
	}
	e.Open(a, "a\n")
	e.Open(b, "b\n")
	e.Open(c, "c\n")
	e.Notify("untitled/ignored", nil)
	e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": a}})
	e.ChangeAt(c, 2, fakeeditor.Replace(fakeeditor.At(0, 1), fakeeditor.At(0, 1), "x"))
	e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": b}})
	e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": a}})
	e.waitAgent("document/didClose", method(acp.AgentMethodDocumentDidClose))

	if got, want := call("workspace/open_documents", map[string]any{"sessionId": "test-session"}),
		`{"documents":[{"uri":"file:///work/project/b.go","languageId":"go"},{"uri":"file:///work/project/c.go","languageId":"go"}]}`; got != want {
		t.Errorf("open_documents %s, want %s", got, want)
	}
	if got, want := call("workspace/recent_documents", map[string]any{"sessionId": "test-session", "limit": 2}),
		`{"documents":[{"uri":"file:///work/project/b.go","languageId":"go"},{"uri":"file:///work/project/c.go","languageId":"go"}]}`; got != want {
		t.Errorf("recent_documents limit 2: %s, want %s", got, want)
	}
	if got := call("workspace/recent_documents", map[string]any{"sessionId": "test-session"}); !strings.HasSuffix(got, `{"uri":"file:///work/project/a.go","languageId":"go"}]}`) {
		t.Errorf("recent_documents: %s, want the closed a.go last", got)
	}
	if got, want := call("workspace/active_document", map[string]any{"sessionId": "test-session"}), `{"document":{"uri":"file:///work/project/b.go","languageId":"go"}}`; got != want {
		t.Errorf("active_document %s, want %s", got, want)
	}
	if _, err := e.agent.Call(ctx, "workspace/recent_documents", map[string]any{"limit": -1}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a negative limit: %v", err)
	}
	// The capabilities were advertised.
	init := e.agent.Received()[0]
	if init.Method != acp.AgentMethodInitialize || !strings.Contains(string(init.Params), `"workspace":{"activeDocument":{},"openDocuments":{},"recentDocuments":{}}`) {
		t.Errorf("initialize %s: want clientCapabilities.workspace", init.Params)
	}
}
