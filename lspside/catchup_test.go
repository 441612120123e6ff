package lspside_test

import (
	"encoding/json"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

// TestEditsWhileTheAgentStartsReachItAsEdits: the user opens files and edits one while the agent
// is still starting (the editor's first seconds). The agent, once ready, gets the edited file as
// it was opened and then the user's edit as a change (so that a rename can be followed through
// the file), the file left alone as it is, and nothing of a file opened and closed meanwhile.
func TestEditsWhileTheAgentStartsReachItAsEdits(t *testing.T) {
	const (
		u      = "file:///work/project/total.go"
		other  = "file:///work/project/other.go"
		closed = "file:///work/project/closed.go"
		text   = "func total() int {\n\tsum := 0 // 日本\n\treturn sum\n}\n"
	)
	gate := make(chan struct{})
	released := false
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", StartGate: gate}})
	t.Cleanup(func() {
		if !released {
			close(gate)
		}
	})
	e.initialize("utf-16")
	e.waitAgent("initialize", method(acp.AgentMethodInitialize)) // it is starting
	e.Open(u, text)
	e.Open(other, "package p\n")
	e.Open(closed, "package gone\n")
	at := strings.Index(text, "sum")
	e.Edit(u, at, at+len("sum"), "acc")
	e.Edit(closed, 0, 0, "// x\n")
	e.CloseDoc(closed)
	close(gate)
	released = true
	e.WaitReady()
	edited := strings.Replace(text, "sum", "acc", 1)
	e.waitAgent("the edit", func(m testagent.Message) bool { return m.Method == acp.AgentMethodDocumentDidChange })

	var opened = map[string]acp.UnstableDidOpenDocumentNotification{}
	var changes []acp.UnstableDidChangeDocumentNotification
	for _, m := range e.agent.Received() {
		switch m.Method {
		case acp.AgentMethodDocumentDidOpen:
			var p acp.UnstableDidOpenDocumentNotification
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			if _, again := opened[p.Uri]; again {
				t.Errorf("%s opened twice", p.Uri)
			}
			opened[p.Uri] = p
		case acp.AgentMethodDocumentDidChange:
			var p acp.UnstableDidChangeDocumentNotification
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			if _, ok := opened[p.Uri]; !ok {
				t.Errorf("a change of %s before it was opened", p.Uri)
			}
			changes = append(changes, p)
		}
	}
	if p := opened[u]; p.Text != text {
		t.Errorf("%s opened with %q, want the text it was opened with in the editor", u, p.Text)
	}
	if p := opened[other]; p.Text != "package p\n" {
		t.Errorf("%s opened with %q", other, p.Text)
	}
	if _, ok := opened[closed]; ok {
		t.Errorf("%s, closed before the agent was ready, was opened", closed)
	}
	if len(changes) != 1 {
		t.Fatalf("changes %+v; want the one edit of %s", changes, u)
	}
	c := changes[0]
	if c.Uri != u || c.Version <= opened[u].Version || len(c.ContentChanges) != 1 {
		t.Fatalf("the change %+v", c)
	}
	r := c.ContentChanges[0].Range
	if r == nil || r.Start.Line != 1 || r.Start.Character != 1 || r.End.Line != 1 || r.End.Character != 4 || c.ContentChanges[0].Text != "acc" {
		t.Errorf("the change %+v %q; want sum (line 1, 1-4) replaced by acc", r, c.ContentChanges[0].Text)
	}
	e.waitMirror(u, edited)
}
