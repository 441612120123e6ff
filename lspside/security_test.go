package lspside_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// beside makes a workspace folder "ws" and a folder "outside" beside it, with these files (paths
// under the base, such as "ws/a.go" and "outside/secret.txt"), and returns both folders' paths.
func beside(t *testing.T, files map[string]string) (ws, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, base, files)
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ws, outside
}

// handedURIs lists every URI a code action hands the editor: its changes' keys, its document
// changes' documents, and a command's arguments that look like URIs.
func handedURIs(a fakeeditor.CodeAction) []string {
	var out []string
	if a.Edit != nil {
		for u := range a.Edit.Changes {
			out = append(out, u)
		}
		for _, dc := range a.Edit.DocumentChanges {
			b, _ := json.Marshal(dc)
			out = append(out, string(b))
		}
	}
	return out
}

// TestAgentURIsAreCheckedBeforeTheEditorSeesThem: the agent names files with URIs that parse to
// one path and read as another (a query that URL parsing drops while the editor keeps the "?" in
// the file name, a fragment, another host). Every kind of suggestion naming one is dropped with a
// log line that says why; a file inside whose name really holds a "?" is offered under a URI
// built from its checked path, and so is the jump to it.
func TestAgentURIsAreCheckedBeforeTheEditorSeesThem(t *testing.T) {
	files := map[string]string{"ws/main.go": "package main\n", "outside/secret.txt": "old secret\n"}
	odd := runtime.GOOS != "windows" // no "?" in a Windows file name
	if odd {
		// The folder the editor will take the "?" for, and the file the old check read instead
		// (URL parsing cut the path at the "?").
		files["ws/x?/y.txt"] = "old text\n"
		files["ws/x"] = "old x\n"
	}
	ws, outside := beside(t, files)
	root := workspace.Host.FileURI(ws)
	mainURI := root + "/main.go"
	e, sc := scriptedEditor(t, root)
	e.Open(mainURI, "package main\n")

	slashWS := filepath.ToSlash(ws)
	if !strings.HasPrefix(slashWS, "/") {
		slashWS = "/" + slashWS
	}
	escape := "file://" + slashWS + "/x?/../../outside/secret.txt" // the editor's "x?" folder, then up and out
	hostile := map[string]string{
		"query":    escape,
		"query2":   "file://" + slashWS + "/main.go?/../../outside/secret.txt",
		"fragment": "file://" + slashWS + "/main.go#/../../outside/secret.txt",
		"host":     "file://evil.example" + slashWS + "/main.go",
		"encoded":  "file://" + slashWS + "/x%3F/../../outside/secret.txt", // a real "?" in the name, and out
		"outside":  workspace.Host.FileURI(filepath.Join(outside, "secret.txt")),
	}
	var answer []any
	var ids []string
	for name, u := range hostile {
		answer = append(answer,
			editSug("edit-"+name, u, 0, 0, 0, 3, "new"),
			map[string]any{"kind": "rename", "id": "rename-" + name, "uri": u, "position": fakeeditor.At(0, 1), "newName": "new"},
			map[string]any{"kind": "jump", "id": "jump-" + name, "uri": u, "position": fakeeditor.At(0, 1)},
			map[string]any{"kind": "searchAndReplace", "id": "sar-" + name, "uri": u, "search": "old", "replace": "new"},
		)
		ids = append(ids, "edit-"+name, "rename-"+name, "jump-"+name, "sar-"+name)
	}
	inside := ""
	if odd {
		// The agent spells the "?" of the real name as it must be spelled: %3F.
		inside = "file://" + slashWS + "/x%3F/y.txt"
		answer = append(answer,
			editSug("edit-inside", inside, 0, 0, 0, 3, "new"),
			map[string]any{"kind": "jump", "id": "jump-inside", "uri": inside, "position": fakeeditor.At(0, 4)},
		)
	}
	actions := scriptedActions(t, e, sc, mainURI, 0, answer)
	for _, id := range ids {
		e.waitAgent("nes/reject "+id, rejectOf(id, acp.UnstableNesRejectReasonIgnored))
	}
	for _, a := range actions {
		for _, u := range handedURIs(a) {
			if strings.Contains(u, "outside") || strings.Contains(u, "..") || strings.Contains(u, "?") || strings.Contains(u, "#") {
				t.Errorf("code action %q hands the editor %s", a.Title, u)
			}
		}
	}
	log := e.logBuf.String()
	for _, why := range []string{"not a plain file: URI", "query or a fragment", "names the host", "outside the workspace folders"} {
		if !strings.Contains(log, why) {
			t.Errorf("no log line says %q", why)
		}
	}
	if !odd {
		if len(actions) != 0 {
			t.Errorf("actions %+v", actions)
		}
		return
	}
	built := workspace.Host.FileURI(filepath.Join(ws, "x?", "y.txt"))
	if built != root+"/x%3F/y.txt" {
		t.Fatalf("the checked path's URI is %s", built)
	}
	var edit, jump *fakeeditor.CodeAction
	for i, a := range actions {
		switch {
		case strings.HasPrefix(a.Title, "Next edit: go to"):
			jump = &actions[i]
		case strings.HasPrefix(a.Title, "Next edit:"):
			edit = &actions[i]
		}
	}
	if len(actions) != 2 || edit == nil || jump == nil {
		t.Fatalf("actions %+v; want the edit and the jump inside", actions)
	}
	if got := handedURIs(*edit); len(got) != 1 || got[0] != built {
		t.Errorf("the edit hands the editor %q, want %q", got, built)
	}
	e.Execute(*jump.Command)
	e.waitAgent("nes/accept jump-inside", func(m testagent.Message) bool {
		return m.Method == "nes/accept" && strings.Contains(string(m.Params), "jump-inside")
	})
	if shown := e.Record().Shown; len(shown) != 1 || !strings.Contains(string(shown[0]), `"uri":"`+built+`"`) {
		t.Errorf("window/showDocument %s; want %s", shown, built)
	}
}

// allContext is every context key the NES proposal has.
func allContext() *acp.NesContextCapabilities {
	return &acp.NesContextCapabilities{
		OpenFiles: &acp.NesOpenFilesCapabilities{}, RecentFiles: &acp.NesRecentFilesCapabilities{MaxCount: intp(10)},
		EditHistory: &acp.NesEditHistoryCapabilities{MaxCount: intp(10)}, UserActions: &acp.NesUserActionsCapabilities{MaxCount: intp(20)},
		Diagnostics: &acp.NesDiagnosticsCapabilities{}, RelatedSnippets: &acp.NesRelatedSnippetsCapabilities{},
	}
}

// TestSecretsNeverReachTheAgent: a .env, a link to it, and a file the user's own glob names are
// open beside a Go file, edited, focused, saved, given diagnostics and asked about, while the agent
// asks for every kind of context, reads them, asks the editor-state methods and suggests edits of
// them. Nothing of them reaches the agent (no URI, no byte of text), nothing is suggested for
// them, and the log names the glob that kept each.
func TestSecretsNeverReachTheAgent(t *testing.T) {
	ws, _ := beside(t, map[string]string{
		"ws/main.go":        "package main\n\nfunc main() {}\n",
		"ws/.env":           "API_KEY=sk-live-0123456789\n",
		"ws/private/own.go": "package private // PRIVATE-MARKER\n",
	})
	linked := true
	if err := os.Symlink(".env", filepath.Join(ws, "notes.txt")); err != nil {
		t.Logf("no links here (%v): the link's case is left out", err)
		linked = false
	} else if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err != nil {
		t.Logf("the link does not resolve here (%v; Wine makes links Windows cannot follow): its case is left out", err)
		linked = false
	}
	root := workspace.Host.FileURI(ws)
	mainURI, envURI, notesURI, ownURI := root+"/main.go", root+"/.env", root+"/notes.txt", root+"/private/own.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", DidFocus: true, Context: allContext(), Suggest: sc.suggest}})
	e.root = root
	e.InitializeWith(fakeeditor.InitParams{Root: root, Encodings: []string{"utf-16"}, Options: map[string]any{"exclude": []string{"private/**", "[bad"}}})
	e.WaitReady()
	e.WaitMessage("initializationOptions.exclude") // the bad glob is reported; the good one applies
	secrets := []string{envURI, ownURI}
	if linked {
		secrets = append(secrets, notesURI)
	}
	e.Open(mainURI, "package main\n\nfunc main() {}\n")
	for _, u := range secrets {
		text := "API_KEY=sk-live-0123456789\n"
		if u == ownURI {
			text = "package private // PRIVATE-MARKER\n"
		}
		e.Open(u, text)
		e.ChangeAt(u, 2, fakeeditor.Insert(fakeeditor.At(0, 0), "# sk-live-typed\n"))
		e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": u}, "position": fakeeditor.At(1, 3)})
		e.Notify("textDocument/didFocus", map[string]any{"textDocument": map[string]any{"uri": u}})
		e.Notify("acp-lsp-bridge/diagnostics", map[string]any{"textDocument": map[string]any{"uri": u}, "diagnostics": []any{
			map[string]any{"range": map[string]any{"start": fakeeditor.At(0, 0), "end": fakeeditor.At(0, 3)}, "severity": 1, "message": "sk-live-in-a-diagnostic"},
		}})
		e.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": u}})
		if items, err := e.InlineTriggered(u, fakeeditor.At(1, 3), 1); err != nil || len(items) != 0 {
			t.Errorf("inline for %s: %v, %v", u, items, err)
		}
		if actions, err := e.CodeActions(u, lineStart(0)); err != nil || len(actions) != 0 {
			t.Errorf("code actions for %s: %v, %v", u, actions, err)
		}
		if edits, err := e.InlineEdits(u, fakeeditor.At(0, 0)); err != nil || len(edits) != 0 {
			t.Errorf("copilotInlineEdit for %s: %v, %v", u, edits, err)
		}
	}
	// A request in main.go: its context has every key, and the agent answers with edits of the
	// secrets.
	e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": mainURI}, "position": fakeeditor.At(2, 3)})
	e.ChangeAt(mainURI, 2, fakeeditor.Insert(fakeeditor.At(2, 14), " "))
	var answer []any
	for i, u := range secrets {
		answer = append(answer, editSug("edit-"+string(rune('a'+i)), u, 0, 0, 0, 3, "LEAK"))
	}
	if actions := scriptedActions(t, e, sc, mainURI, 2, answer); len(actions) != 0 {
		t.Errorf("code actions editing a secret: %+v", actions)
	}
	// The agent asks for them.
	for _, u := range secrets {
		_, err := e.agentCall("fs/read_text_file", map[string]any{"sessionId": "s", "path": workspace.URIPath(u)})
		if err == nil || !strings.Contains(err.Error(), "exclusion glob") {
			t.Errorf("fs/read_text_file %s: %v; want a refusal naming the glob", u, err)
		}
	}
	for _, m := range []string{"workspace/open_documents", "workspace/recent_documents", "workspace/active_document"} {
		if _, err := e.agentCall(m, map[string]any{}); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	for _, u := range secrets {
		e.CloseDoc(u)
	}
	e.Shutdown()
	for _, m := range e.theAgent().Received() {
		b := string(m.Params)
		for _, leak := range []string{"sk-live", ".env", "notes.txt", "own.go", "PRIVATE-MARKER"} {
			if strings.Contains(b, leak) {
				t.Errorf("the agent received %q in %s: %s", leak, m.Method, b)
			}
		}
	}
	if got := lastSuggest(t, e); got.Context == nil || len(got.Context.OpenFiles) != 1 {
		t.Errorf("the context's open files: %+v; want main.go alone", got.Context)
	}
	log := e.logBuf.String()
	for _, want := range []string{`"glob":".env"`, `"glob":"private/**"`, "document kept from the agent"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %s", want)
		}
	}
	if strings.Contains(log, "sk-live") {
		t.Error("the log holds a secret's text")
	}
}

// TestExcludedDefaultsCleared: with the defaults cleared, a .env is an ordinary file again, and a
// glob of the bridge's own configuration still applies.
func TestExcludedDefaultsCleared(t *testing.T) {
	ws, _ := beside(t, map[string]string{"ws/.env": "A=1\n", "ws/a.local": "x\n"})
	root := workspace.Host.FileURI(ws)
	e := newEditor(t, harnessOpts{cfg: lspside.Config{Exclude: []string{"*.local"}}})
	e.InitializeWith(fakeeditor.InitParams{Root: root, Options: map[string]any{"defaultExcludes": false}})
	e.WaitReady()
	e.Open(root+"/.env", "A=1\n")
	e.Open(root+"/a.local", "x\n")
	e.waitAgent("didOpen .env", func(m testagent.Message) bool {
		return m.Method == "document/didOpen" && strings.Contains(string(m.Params), "/.env")
	})
	for _, m := range e.theAgent().Received() {
		if strings.Contains(string(m.Params), "a.local") {
			t.Errorf("the agent received a.local: %s", m.Params)
		}
	}
}
