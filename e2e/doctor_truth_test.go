package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestDoctorSaysWhatTheAgentGets runs doctor against testdata/peers/context-agent.mjs (the
// official ACP SDK; it asks for every context key and for didFocus), then the bridge with the same
// agent and a plain LSP client (no Copilot notification, no acp-lsp-bridge/didFocus): the editor
// opens two files, edits, saves, asks in one file (inline completion, then a code action with a
// diagnostic) and then in the other, and closes one. Every
// context key doctor says the bridge sends arrives in nes/suggest, and no other; every document
// event doctor says the agent gets arrives; and the report says none of its old caveats.
func TestDoctorSaysWhatTheAgentGets(t *testing.T) {
	node, script := contextAgent(t)
	dir := t.TempDir()
	env := []string{"CONTEXT_AGENT_LOG=" + filepath.Join(t.TempDir(), "doctor-agent.jsonl")}
	rep := doctorJSON(t, runDoctor(t, dir, env, "--json", "--", node, script))
	caps, _ := rep["capabilities"].(map[string]any)
	strs := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		slices.Sort(out)
		return out
	}
	saidContext, saidEvents := strs(caps["suggestContext"]), strs(caps["documentEvents"])
	human := runDoctor(t, dir, env, "--", node, script).stdout
	for _, stale := range []string{"sends none of these", "sends only diagnostics", "Copilot-style clients only"} {
		if strings.Contains(human, stale) {
			t.Errorf("doctor's report still says %q:\n%s", stale, human)
		}
	}

	// What the agent actually gets from the bridge and a plain LSP client.
	agentLog := filepath.Join(t.TempDir(), "agent.jsonl")
	root := fileURI(dir)
	aURI, bURI := root+"/a.go", root+"/b.go"
	b := startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{Root: root, Encodings: []string{"utf-16"}, Options: map[string]any{"agent": map[string]any{
		"command": node, "args": []string{script}, "env": map[string]string{"CONTEXT_AGENT_LOG": agentLog},
	}}})
	b.waitMessage("context-test-agent is ready")
	b.Open(aURI, "package p\n\nfunc a() int {\n\treturn 1\n}\n")
	b.Open(bURI, "package p\n\nfunc b() int { return a() }\n")
	b.Change(aURI, fakeeditor.Insert(fakeeditor.At(3, 9), "0"))
	b.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": aURI}})
	if _, err := b.Inline(aURI, fakeeditor.At(3, 10)); err != nil {
		t.Fatal(err)
	}
	// A code action carries the editor's diagnostics (how a plain LSP client tells them).
	diag := map[string]any{"range": fakeeditor.Span(fakeeditor.At(3, 8), fakeeditor.At(3, 10)), "severity": 1, "message": "constant 10 is not what Total returns"}
	if _, err := b.CodeActions(aURI, fakeeditor.Span(fakeeditor.At(3, 8), fakeeditor.At(3, 10)), diag); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Inline(bURI, fakeeditor.At(2, 20)); err != nil {
		t.Fatal(err)
	}
	b.CloseDoc(bURI)
	var got []ctxLogLine
	waitCond(t, "document/didClose at the agent", func() ([]ctxLogLine, bool) {
		got = nil
		if _, err := os.Stat(agentLog); err == nil {
			got = readContextLog(t, agentLog)
		}
		return got, slices.ContainsFunc(got, func(l ctxLogLine) bool { return l.Method == "document/didClose" })
	})
	keys, events := map[string]bool{}, map[string]bool{}
	for _, l := range got {
		switch {
		case l.Kind == "suggest":
			var p struct {
				Context map[string]json.RawMessage `json:"context"`
			}
			_ = json.Unmarshal(l.Params, &p)
			for k := range p.Context {
				keys[k] = true
			}
		case l.Kind == "notification" && strings.HasPrefix(l.Method, "document/"):
			events[strings.TrimPrefix(l.Method, "document/")] = true
		}
	}
	received := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(received, saidContext) {
		t.Errorf("doctor says the bridge sends the context keys %q; the agent received %q", saidContext, received)
	}
	for _, e := range saidEvents {
		if !events[e] {
			t.Errorf("doctor says the agent gets document/%s; it never arrived (it got %v)", e, events)
		}
	}
	if len(saidContext) != 6 || !slices.Contains(saidEvents, "didFocus") {
		t.Errorf("doctor's capabilities for an agent that asks for everything: context %q, events %q", saidContext, saidEvents)
	}
}
