package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// workspaceDir makes a workspace folder on disk and returns its URI and path.
func workspaceDir(t *testing.T, files map[string]string) (string, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, dir, files)
	return string(uri.File(dir)), dir
}

func editSug(id, u string, l1, c1, l2, c2 int, text string) map[string]any {
	return map[string]any{"kind": "edit", "id": id, "uri": u, "edits": []any{
		map[string]any{"range": map[string]any{"start": fakeeditor.At(l1, c1), "end": fakeeditor.At(l2, c2)}, "newText": text},
	}}
}

// applyEdits applies LSP text edits in utf-16, as the tests' editors do.
func applyEdits(t *testing.T, text string, edits []fakeeditor.TextEdit) string {
	t.Helper()
	out, err := fakeeditor.ApplyEdits(text, edits, encoding.UTF16)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lineStart is the empty range at the start of line.
func lineStart(line int) fakeeditor.Range {
	return fakeeditor.Span(fakeeditor.At(line, 0), fakeeditor.At(line, 0))
}

func TestCodeActionsForEveryKind(t *testing.T) {
	const mainText = "package main\n\nfunc main() {\n\ttotal := add(1, 2) + len(\"𐐀日本\")\n\tfmt.Println(total, totals)\n}\n"
	const otherText = "package main\n\nfunc add(a, b int) int { return a + b }\n"
	root, dir := workspaceDir(t, map[string]string{
		"other.go":    otherText,
		"sub/x.txt":   "old_name here\nold_name there\n",
		"sub/bin.dat": "old_name\x00binary",
		".git/config": "old_name",
	})
	outside, _ := workspaceDir(t, map[string]string{"y.txt": "old_name"})
	mainURI, otherURI := root+"/main.go", root+"/other.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-32", Suggest: sc.suggest}})
	e.root = root
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(mainURI, mainText)

	ch := make(chan []fakeeditor.CodeAction, 1)
	go func() {
		a, err := e.CodeActions(mainURI, lineStart(3))
		if err != nil {
			t.Error(err)
		}
		ch <- a
	}()
	call := sc.nextCall(t)
	if call.req.TriggerKind != acp.UnstableNesTriggerKindAutomatic || call.req.Position.Line != 3 {
		t.Errorf("nes/suggest %+v", call.req)
	}
	// utf-32: line 3 is "\ttotal := add(1, 2) + len(\"𐐀日本\")": its end is column 33.
	endOfSum := strings.Index(otherText, "a + b") + len("a + b") - strings.Index(otherText, "func add")
	otherEdit := editSug("e2", otherURI, 2, endOfSum, 2, endOfSum, " + 0")
	otherEdit["cursorPosition"] = fakeeditor.At(2, endOfSum+4)
	isRegex := true
	sc.answers <- map[string]any{"suggestions": []any{
		editSug("e1", mainURI, 3, 33, 3, 33, " * 2"),
		otherEdit,
		map[string]any{"kind": "jump", "id": "j1", "uri": otherURI, "position": fakeeditor.At(2, 5)},
		map[string]any{"kind": "rename", "id": "r1", "uri": mainURI, "position": fakeeditor.At(3, 3), "newName": "sum"},
		map[string]any{"kind": "searchAndReplace", "id": "s1", "uri": mainURI, "search": "fmt", "replace": "log"},
		map[string]any{"kind": "searchAndReplace", "id": "s2", "uri": root + "/sub", "search": `old_(\w+)`, "replace": "new_$1", "isRegex": isRegex},
		map[string]any{"kind": "searchAndReplace", "id": "o1", "uri": outside + "/y.txt", "search": "old", "replace": "new"},
		map[string]any{"kind": "searchAndReplace", "id": "o2", "uri": root + "/../" + filepath.Base(filepath.Dir(dir)), "search": "old", "replace": "new"},
	}}
	actions := <-ch
	byTitle := map[string]fakeeditor.CodeAction{}
	var titles []string
	for _, a := range actions {
		byTitle[a.Title] = a
		titles = append(titles, a.Title)
	}
	want := []string{
		"Next edit: insert ` * 2` (line 4)",
		"Next edit: insert ` + 0` (other.go:3)",
		"Next edit: go to other.go:3",
		"Rename `total` → `sum` in main.go (2 whole-identifier matches)",
		"Replace `fmt` → `log` (literal, 1 matches in main.go)",
		"Replace `old_(\\w+)` → `new_$1` (regex, 2 matches in x.txt)",
	}
	for _, w := range want {
		if _, ok := byTitle[w]; !ok {
			t.Errorf("no code action %q; got %q", w, titles)
		}
	}
	if len(actions) != len(want) {
		t.Errorf("got %d actions %q, want %d", len(actions), titles, len(want))
	}
	for _, id := range []string{"o1", "o2"} {
		e.waitAgent("nes/reject "+id, rejectOf(id, acp.UnstableNesRejectReasonIgnored))
	}
	if t.Failed() {
		return
	}
	// Each edit, applied, gives what the suggestion meant.
	check := func(title, u, before, after string) {
		t.Helper()
		a := byTitle[title]
		if a.Edit == nil || len(a.Edit.Changes[u]) == 0 {
			t.Fatalf("%q: no changes for %s: %+v", title, u, a.Edit)
		}
		if got := applyEdits(t, before, a.Edit.Changes[u]); got != after {
			t.Errorf("%q applied:\n got %q\nwant %q", title, got, after)
		}
	}
	check(want[0], mainURI, mainText, strings.Replace(mainText, "日本\")", "日本\") * 2", 1))
	check(want[1], otherURI, otherText, strings.Replace(otherText, "a + b", "a + b + 0", 1))
	check(want[3], mainURI, mainText, strings.Replace(strings.Replace(mainText, "total :=", "sum :=", 1), "Println(total,", "Println(sum,", 1))
	check(want[4], mainURI, mainText, strings.Replace(mainText, "fmt.", "log.", 1))
	check(want[5], string(uri.File(filepath.Join(dir, "sub", "x.txt"))), "old_name here\nold_name there\n", "new_name here\nnew_name there\n")

	// Accepting the jump and the other-file edit takes the cursor there.
	e.Execute(*byTitle[want[2]].Command)
	e.Execute(*byTitle[want[1]].Command)
	e.waitAgent("nes/accept j1", func(m testagent.Message) bool {
		return m.Method == "nes/accept" && strings.Contains(string(m.Params), `"j1"`)
	})
	e.waitAgent("nes/accept e2", func(m testagent.Message) bool {
		return m.Method == "nes/accept" && strings.Contains(string(m.Params), `"e2"`)
	})
	shown := e.Record().Shown
	wantShown := []string{
		`{"uri":"` + otherURI + `","takeFocus":true,"selection":{"start":{"line":2,"character":5},"end":{"line":2,"character":5}}}`,
		`{"uri":"` + otherURI + `","takeFocus":true,"selection":{"start":{"line":2,"character":41},"end":{"line":2,"character":41}}}`,
	}
	if len(shown) != 2 || string(shown[0]) != wantShown[0] || string(shown[1]) != wantShown[1] {
		t.Errorf("window/showDocument:\n got %s\nwant %s", shown, wantShown)
	}
	// The rest end once each when the document moves on; then nothing is live.
	e.ChangeAt(mainURI, 2, fakeeditor.Replace(fakeeditor.At(0, 0), fakeeditor.At(0, 0), "// x\n"))
	for _, id := range []string{"e1", "r1", "s1", "s2"} {
		e.waitAgent("nes/reject "+id, rejectOf(id, acp.UnstableNesRejectReasonIgnored))
	}
	checkEndedOnce(t, e, "e1", "e2", "j1", "r1", "s1", "s2", "o1", "o2")
}

// scriptedActions asks for the code actions at the start of line of u; with answer (not nil) the
// scripted agent answers the nes/suggest they cause with those suggestions.
func scriptedActions(t *testing.T, e *editor, sc *scripted, u string, line int, answer []any) []fakeeditor.CodeAction {
	t.Helper()
	ch := make(chan []fakeeditor.CodeAction, 1)
	go func() {
		a, err := e.CodeActions(u, lineStart(line))
		if err != nil {
			t.Error(err)
		}
		ch <- a
	}()
	if answer != nil {
		sc.nextCall(t)
		sc.answers <- map[string]any{"suggestions": answer}
	}
	return <-ch
}

// scriptedEditor is an editor on the workspace root (utf-16) whose agent answers as the test
// scripts it.
func scriptedEditor(t *testing.T, root string) (*editor, *scripted) {
	t.Helper()
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Suggest: sc.suggest}})
	e.root = root
	e.initialize("utf-16")
	e.WaitReady()
	return e, sc
}

// TestCodeActionsInTheFileTheyEdit: an edit the agent proposed for another open file, while the
// user was in the first, is offered in that file's code actions too (the user went there by its
// jump), as long as that file reads as it was when proposed.
func TestCodeActionsInTheFileTheyEdit(t *testing.T) {
	root, _ := workspaceDir(t, map[string]string{})
	mainURI, otherURI := root+"/main.go", root+"/other.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Suggest: sc.suggest}})
	e.root = root
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(mainURI, "package main\n\nfunc Sum() {}\n")
	e.Open(otherURI, "package main\n\n// 日本\nvar x = Total()\n")

	actionsIn := func(u string, line int, answer []any) []string {
		t.Helper()
		var titles []string
		for _, a := range scriptedActions(t, e, sc, u, line, answer) {
			titles = append(titles, a.Title)
		}
		return titles
	}
	want := "Next edit: `Total` → `Sum` (other.go:4)"
	if got := actionsIn(mainURI, 2, []any{editSug("e1", otherURI, 3, 8, 3, 13, "Sum")}); len(got) != 1 || got[0] != want {
		t.Fatalf("code actions in main.go: %q, want %q", got, want)
	}
	if got := actionsIn(otherURI, 0, []any{}); len(got) != 1 || got[0] != want {
		t.Errorf("code actions in other.go: %q, want %q", got, want)
	}
	// Once other.go changed, the edit is stale there: not offered, and ended.
	e.ChangeAt(otherURI, 2, fakeeditor.Replace(fakeeditor.At(0, 0), fakeeditor.At(0, 0), "// x\n"))
	e.waitAgent("nes/reject e1", rejectOf("e1", acp.UnstableNesRejectReasonIgnored))
	if got := actionsIn(otherURI, 0, []any{}); len(got) != 0 {
		t.Errorf("code actions in the changed other.go: %q", got)
	}
}

func TestCodeActionsUseDocumentChangesWhenSupported(t *testing.T) {
	root, _ := workspaceDir(t, map[string]string{"other.go": "x\n"})
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Suggest: sc.suggest}})
	e.root = root
	e.initializeWith(map[string]any{"workspace": map[string]any{"workspaceEdit": map[string]any{"documentChanges": true}}})
	e.WaitReady()
	mainURI := root + "/main.go"
	e.Open(mainURI, "a\n")
	ch := make(chan []fakeeditor.CodeAction, 1)
	go func() { a, _ := e.CodeActions(mainURI, lineStart(0)); ch <- a }()
	sc.nextCall(t)
	sc.answers <- map[string]any{"suggestions": []any{editSug("e1", mainURI, 0, 1, 0, 1, "b"), editSug("e2", root+"/other.go", 0, 0, 0, 1, "y")}}
	actions := <-ch
	if len(actions) != 2 {
		t.Fatalf("actions %+v", actions)
	}
	for _, a := range actions {
		if a.Edit == nil || len(a.Edit.Changes) != 0 || len(a.Edit.DocumentChanges) != 1 {
			t.Fatalf("%q: edit %+v, want documentChanges only", a.Title, a.Edit)
		}
		dc := a.Edit.DocumentChanges[0]
		switch dc.TextDocument.URI {
		case mainURI:
			if dc.TextDocument.Version == nil || *dc.TextDocument.Version != 1 {
				t.Errorf("open document's version %v, want 1", dc.TextDocument.Version)
			}
		case root + "/other.go":
			if dc.TextDocument.Version != nil {
				t.Errorf("a file that is not open has version %v, want null", *dc.TextDocument.Version)
			}
		default:
			t.Errorf("uri %s", dc.TextDocument.URI)
		}
	}
}

func TestCodeActionWithDiagnostics(t *testing.T) {
	const u = "file:///work/project/d.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-8", ContextDiagnostics: true, Suggest: sc.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(u, "x := 𐐀 + y\n")
	ch := make(chan []fakeeditor.CodeAction, 1)
	go func() {
		a, _ := e.CodeActions(u, lineStart(0), map[string]any{
			"range": map[string]any{"start": fakeeditor.At(0, 10), "end": fakeeditor.At(0, 11)}, "severity": 1, "message": "undefined: y",
		})
		ch <- a
	}()
	call := sc.nextCall(t)
	if call.req.TriggerKind != acp.UnstableNesTriggerKindDiagnostic || call.req.Context == nil || len(call.req.Context.Diagnostics) != 1 {
		t.Fatalf("nes/suggest %+v", call.req)
	}
	d := call.req.Context.Diagnostics[0]
	// utf-16 10..11 is after "x := 𐐀 + " (𐐀 is 2 units, 4 bytes): bytes 12..13.
	if d.Uri != u || d.Severity != "error" || d.Message != "undefined: y" || d.Range.Start.Character != 12 || d.Range.End.Character != 13 {
		t.Errorf("diagnostic %+v", d)
	}
	sc.answers <- map[string]any{"suggestions": []any{editSug("f1", u, 0, 12, 0, 13, "z")}}
	actions := <-ch
	if len(actions) != 1 || actions[0].Kind != "quickfix" {
		t.Fatalf("actions %+v", actions)
	}
}

func TestCopilotInlineEdit(t *testing.T) {
	const u = "file:///work/project/c.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-8", Suggest: sc.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(u, "a := 1\n\n// 𐐀 far below\nb := old\n")
	type result struct {
		Edits []struct {
			Text  string `json:"text"`
			Range struct {
				Start fakeeditor.Pos `json:"start"`
				End   fakeeditor.Pos `json:"end"`
			} `json:"range"`
			TextDocument struct {
				URI     string          `json:"uri"`
				Version json.RawMessage `json:"version"`
			} `json:"textDocument"`
			Command struct {
				Command   string `json:"command"`
				Arguments []any  `json:"arguments"`
			} `json:"command"`
		} `json:"edits"`
	}
	var res result
	done := make(chan error, 1)
	go func() {
		done <- e.Call("textDocument/copilotInlineEdit", map[string]any{
			"textDocument": map[string]any{"uri": u, "version": 1}, "position": fakeeditor.At(0, 6),
		}, &res)
	}()
	sc.nextCall(t)
	// Two edits: the one on the cursor's line wins over the one three lines below (after 𐐀).
	sc.answers <- map[string]any{"suggestions": []any{
		editSug("far", u, 0, 0, 0, 1, "A"),
		editSug("near", u, 3, 5, 3, 8, "new"),
	}}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(res.Edits) != 1 {
		t.Fatalf("edits %+v", res.Edits)
	}
	ed := res.Edits[0]
	if ed.Text != "A" || ed.Range.Start.Line != 0 || ed.Range.End.Character != 1 || string(ed.TextDocument.Version) != "1" || ed.TextDocument.URI != u || ed.Command.Arguments[0] != "far" {
		t.Errorf("edit %+v", ed)
	}
	// A request for a version the bridge does not have answers nothing, without asking the agent.
	var stale result
	if err := e.Call("textDocument/copilotInlineEdit", map[string]any{
		"textDocument": map[string]any{"uri": u, "version": 7}, "position": fakeeditor.At(0, 0),
	}, &stale); err != nil || len(stale.Edits) != 0 {
		t.Errorf("stale version: %+v %v", stale, err)
	}
	e.MustCall("workspace/executeCommand", map[string]any{"command": ed.Command.Command, "arguments": ed.Command.Arguments}, nil)
	e.waitAgent("nes/accept far", func(m testagent.Message) bool {
		return m.Method == "nes/accept" && strings.Contains(string(m.Params), `"far"`)
	})
}

func TestCopilotDidFocusIsForwarded(t *testing.T) {
	const u = "file:///work/project/f.go"
	for _, wants := range []bool{true, false} {
		e := newEditor(t, harnessOpts{agentCfg: testagent.Config{DidFocus: wants}})
		e.initialize()
		e.Open(u, "x\n")
		e.waitAgent("didOpen", method("document/didOpen"))
		e.Notify("textDocument/didFocus", map[string]any{"textDocument": map[string]any{"uri": u}})
		e.Notify("textDocument/didShowInlineEdit", map[string]any{"item": map[string]any{"text": "x"}})
		e.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": u}})
		e.waitAgent("didSave", method("document/didSave"))
		var got []string
		for _, m := range e.agent.Received() {
			if m.Method == "document/didFocus" {
				got = append(got, string(m.Params))
			}
		}
		switch {
		case wants && (len(got) != 1 || !strings.Contains(got[0], `"uri":"`+u+`"`) || !strings.Contains(got[0], `"version":1`)):
			t.Errorf("agent asking for didFocus got %q", got)
		case !wants && len(got) != 0:
			t.Errorf("agent not asking for didFocus got %q", got)
		}
	}
}

func TestCompletionItems(t *testing.T) {
	const u = "file:///work/project/k.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest}})
	e.initialize("utf-16") // no inlineCompletion capability: completion items are on
	e.WaitReady()
	e.Open(u, "x := fo\ny := 1\n")
	type item struct {
		Label               string                `json:"label"`
		FilterText          string                `json:"filterText"`
		TextEdit            fakeeditor.TextEdit   `json:"textEdit"`
		AdditionalTextEdits []fakeeditor.TextEdit `json:"additionalTextEdits"`
		Command             struct {
			Arguments []any `json:"arguments"`
		} `json:"command"`
	}
	var res struct {
		IsIncomplete bool   `json:"isIncomplete"`
		Items        []item `json:"items"`
	}
	done := make(chan error, 1)
	go func() {
		done <- e.Call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": u}, "position": fakeeditor.At(0, 7)}, &res)
	}()
	sc.nextCall(t)
	sc.answers <- map[string]any{"suggestions": []any{map[string]any{"kind": "edit", "id": "c1", "uri": u, "edits": []any{
		map[string]any{"range": map[string]any{"start": fakeeditor.At(0, 5), "end": fakeeditor.At(0, 7)}, "newText": "foo()"},
		map[string]any{"range": map[string]any{"start": fakeeditor.At(1, 5), "end": fakeeditor.At(1, 6)}, "newText": "foo()"},
	}}}}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !res.IsIncomplete || len(res.Items) != 1 {
		t.Fatalf("completion %+v", res)
	}
	it := res.Items[0]
	text := "x := fo\ny := 1\n"
	got := applyEdits(t, text, append([]fakeeditor.TextEdit{it.TextEdit}, it.AdditionalTextEdits...))
	if got != "x := foo()\ny := foo()\n" || it.FilterText != "fo" || it.Label != "foo()" || it.TextEdit.Range.Start.Line != 0 {
		t.Errorf("item %+v applies to %q", it, got)
	}
}

func TestRejectAndSuggestCommands(t *testing.T) {
	const u = "file:///work/project/r.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(u, "abc\n")
	// Reject by id.
	res := e.inlineAsync(u, fakeeditor.At(0, 3))
	sc.nextCall(t)
	sc.answers <- insertAt("x1", u, 0, 3, "d")
	waitResult(t, res)
	e.MustCall("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.reject", "arguments": []any{"x1"}}, nil)
	e.waitAgent("nes/reject x1 rejected", rejectOf("x1", acp.UnstableNesRejectReasonRejected))

	// Manual suggest, answered Dismiss.
	e.setAnswer("Dismiss")
	done := make(chan error, 1)
	go func() {
		done <- e.Call("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.suggest", "arguments": []any{map[string]any{"uri": u, "position": fakeeditor.At(0, 3)}}}, nil)
	}()
	call := sc.nextCall(t)
	if call.req.TriggerKind != acp.UnstableNesTriggerKindManual {
		t.Errorf("triggerKind %q", call.req.TriggerKind)
	}
	sc.answers <- insertAt("x2", u, 0, 3, "d")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	e.waitAgent("nes/reject x2 rejected", rejectOf("x2", acp.UnstableNesRejectReasonRejected))

	// Manual suggest, answered Apply: the edit is applied through workspace/applyEdit, then accepted.
	e.mu.Lock()
	e.answer = "Apply"
	e.mu.Unlock()
	go func() {
		// LSP's TextDocumentPositionParams form, which Sublime's lsp_execute fills in.
		done <- e.Call("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.suggest", "arguments": []any{map[string]any{"textDocument": map[string]any{"uri": u}, "position": fakeeditor.At(0, 3)}}}, nil)
	}()
	sc.nextCall(t)
	sc.answers <- insertAt("x3", u, 0, 3, "d")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	e.waitAgent("nes/accept x3", func(m testagent.Message) bool {
		return m.Method == "nes/accept" && strings.Contains(string(m.Params), `"x3"`)
	})
	rec := e.Record()
	if len(rec.Applied) != 1 || !strings.Contains(string(rec.Applied[0]), `"changes":{"`+u+`":[{"range":{"start":{"line":0,"character":3},"end":{"line":0,"character":3}},"newText":"d"}]}`) {
		t.Errorf("workspace/applyEdit %s", rec.Applied)
	}
	if len(rec.Questions) != 2 || !strings.Contains(rec.Questions[0], "insert `d`") {
		t.Errorf("questions %q", rec.Questions)
	}
	if len(rec.Shown) != 2 {
		t.Errorf("window/showDocument %s, want one per manual suggestion", rec.Shown)
	}
}

// TestLateApplyDoesNotApplyAStaleSuggestion: the user answers Apply after the document changed.
func TestLateApplyDoesNotApplyAStaleSuggestion(t *testing.T) {
	const u = "file:///work/project/late.go"
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(u, "abc\n")
	e.mu.Lock()
	e.answer, e.hold = "Apply", make(chan struct{})
	e.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		done <- e.Call("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.suggest", "arguments": []any{map[string]any{"uri": u, "position": fakeeditor.At(0, 3)}}}, nil)
	}()
	sc.nextCall(t)
	sc.answers <- insertAt("late", u, 0, 3, "d")
	e.Await(fakeeditor.Questions(1))
	e.ChangeAt(u, 2, fakeeditor.Replace(fakeeditor.At(0, 0), fakeeditor.At(0, 0), "x")) // the user types while the question is open
	e.waitAgent("nes/reject late", rejectOf("late", acp.UnstableNesRejectReasonIgnored))
	e.mu.Lock()
	close(e.hold)
	e.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if applied := e.Record().Applied; len(applied) != 0 {
		t.Errorf("a stale suggestion was applied: %s", applied)
	}
	checkEndedOnce(t, e, "late")
}

// TestOpenDocumentOutsideTheWorkspaceIsRefused: being open in the editor does not let a suggestion
// reach a file outside the workspace folders.
func TestOpenDocumentOutsideTheWorkspaceIsRefused(t *testing.T) {
	root, _ := workspaceDir(t, map[string]string{})
	outside, _ := workspaceDir(t, map[string]string{"secret.txt": "secret\n"})
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Suggest: sc.suggest}})
	e.root = root
	e.initialize()
	e.WaitReady()
	mainURI, secretURI := root+"/main.go", outside+"/secret.txt"
	e.Open(mainURI, "x\n")
	e.Open(secretURI, "secret\n")
	ch := make(chan []fakeeditor.CodeAction, 1)
	go func() { a, _ := e.CodeActions(mainURI, lineStart(0)); ch <- a }()
	sc.nextCall(t)
	sc.answers <- map[string]any{"suggestions": []any{
		map[string]any{"kind": "searchAndReplace", "id": "sar", "uri": secretURI, "search": "secret", "replace": "LEAKED"},
		editSug("edit", secretURI, 0, 0, 0, 6, "LEAKED"),
		map[string]any{"kind": "rename", "id": "ren", "uri": secretURI, "position": fakeeditor.At(0, 1), "newName": "LEAKED"},
		map[string]any{"kind": "jump", "id": "jmp", "uri": secretURI, "position": fakeeditor.At(0, 1)},
	}}
	if actions := <-ch; len(actions) != 0 {
		t.Errorf("actions for a file outside the workspace: %+v", actions)
	}
	for _, id := range []string{"sar", "edit", "ren", "jmp"} {
		e.waitAgent("nes/reject "+id, rejectOf(id, acp.UnstableNesRejectReasonIgnored))
	}
	if !strings.Contains(e.logBuf.String(), "outside the workspace folders") {
		t.Error("no log line says why")
	}
}

// TestNESStartDescribesTheRepository: nes/start carries the workspace root's git remote, and no
// repository when the workspace is not a git repository.
func TestNESStartDescribesTheRepository(t *testing.T) {
	root, _ := workspaceDir(t, map[string]string{
		".git/config": "[remote \"origin\"]\n\turl = git@github.com:alice/my-app.git\n",
	})
	plain, _ := workspaceDir(t, map[string]string{"a.txt": "x"})
	for _, tc := range []struct{ root, want string }{
		{root, `"repository":{"name":"my-app","owner":"alice","remoteUrl":"git@github.com:alice/my-app.git"}`},
		{plain, ""},
	} {
		e := newEditor(t, harnessOpts{})
		e.root = tc.root
		e.initialize()
		m := e.waitAgent("nes/start", method("nes/start"))
		got := string(m.Params)
		if !strings.Contains(got, `"workspaceUri":"`+tc.root+`"`) {
			t.Errorf("nes/start %s", got)
		}
		if tc.want != "" && !strings.Contains(got, tc.want) || tc.want == "" && strings.Contains(got, "repository") {
			t.Errorf("nes/start %s, want repository %s", got, tc.want)
		}
	}
}

// TestSuggestionForTheOpenDocumentSpelledOtherwise: an agent that spells the document's URI
// another way (file://localhost/…, percent-escapes the editor did not use) still means the open
// document: the code action edits it under the editor's own URI, as an edit of this file.
func TestSuggestionForTheOpenDocumentSpelledOtherwise(t *testing.T) {
	root, _ := workspaceDir(t, map[string]string{})
	mainURI := root + "/main.go"
	e, sc := scriptedEditor(t, root)
	e.Open(mainURI, "package main\n\nvar x = Total()\n")
	for _, spelled := range []string{
		"file://localhost" + strings.TrimPrefix(mainURI, "file://"),
		strings.TrimSuffix(mainURI, "main.go") + "m%61in.go",
	} {
		actions := scriptedActions(t, e, sc, mainURI, 2, []any{editSug("s1", spelled, 2, 8, 2, 13, "Sum")})
		if len(actions) != 1 || actions[0].Title != "Next edit: `Total` → `Sum` (line 3)" || actions[0].Edit == nil || len(actions[0].Edit.Changes[mainURI]) != 1 {
			t.Errorf("%s: actions %+v; want the edit of the open main.go", spelled, actions)
		}
		e.Execute(fakeeditor.Command{Command: "acp-lsp-bridge.reject", Arguments: []any{}})
	}
}
