package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"encoding/json"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// An agent that crashes is restarted after a backoff: initialize, nes/start and didOpen again, with
// the text the crashed agent had, then the edits made during the outage as a change (so that they
// reach it as edits); requests during the outage answer empty at once.
func TestAgentIsRestartedWithTheEditorsText(t *testing.T) {
	const a, b = "file:///work/project/a.go", "file:///work/project/b.go"
	e := newEditor(t, harnessOpts{
		agentCfg: testagent.Config{Encoding: "utf-16", Rules: []testagent.Rule{{When: "hel", Find: "hel", Replace: "hello"}}},
		cfg:      lspside.Config{RestartDelays: []time.Duration{300 * time.Millisecond}, SuggestTimeout: time.Minute},
	})
	e.initialize("utf-16")
	e.Open(a, "hel\n")
	e.Open(b, "bé\n")
	e.waitMirror(b, "bé\n")
	first := e.theAgent()

	e.mu.Lock()
	kill := e.kill
	e.mu.Unlock()
	kill()
	e.WaitMessage("acp-test-agent exited")
	// The outage: the editor keeps editing, and a request does not wait (a minute's timeout).
	e.ChangeAt(a, 2, fakeeditor.Replace(fakeeditor.At(0, 0), fakeeditor.At(0, 0), "// ünï\n"))
	if items, err := e.Inline(a, fakeeditor.At(1, 3)); err != nil || len(items) != 0 {
		t.Fatalf("during the outage: %+v, %v", items, err)
	}
	e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": b}})

	deadline := time.Now().Add(10 * time.Second)
	for e.theAgent() == first && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if e.theAgent() == first {
		t.Fatal("the agent was not restarted")
	}
	e.waitMirror(a, "// ünï\nhel\n")
	if _, open := e.theAgent().Mirror(b); open {
		t.Error("the restarted agent was told of a document closed during the outage")
	}
	received := e.theAgent().Received()
	got := methods(received)
	if len(got) < 4 || got[0] != acp.AgentMethodInitialize || got[1] != acp.AgentMethodNesStart || got[2] != acp.AgentMethodDocumentDidOpen || got[3] != acp.AgentMethodDocumentDidChange {
		t.Fatalf("the restarted agent received %v", got)
	}
	var opened acp.UnstableDidOpenDocumentNotification
	var changed acp.UnstableDidChangeDocumentNotification
	if err := json.Unmarshal(received[2].Params, &opened); err != nil || opened.Uri != a || opened.Text != "hel\n" {
		t.Errorf("the restarted agent opened %s with %q (%v); want %s with the crashed agent's text", opened.Uri, opened.Text, err, a)
	}
	if err := json.Unmarshal(received[3].Params, &changed); err != nil || changed.Uri != a || len(changed.ContentChanges) != 1 || changed.ContentChanges[0].Text != "// ünï\n" {
		t.Errorf("then the change %+v (%v); want the outage's edit", changed, err)
	}
	// Later edits reach it as changes, and it suggests again.
	e.ChangeAt(a, 3, fakeeditor.Replace(fakeeditor.At(1, 3), fakeeditor.At(1, 3), " "))
	e.ChangeAt(a, 4, fakeeditor.Replace(fakeeditor.At(1, 3), fakeeditor.At(1, 4), ""))
	e.waitMirror(a, "// ünï\nhel\n")
	items, err := e.Inline(a, fakeeditor.At(1, 3))
	if err != nil || len(items) != 1 || items[0].InsertText != "hello" {
		t.Fatalf("after the restart: %+v, %v", items, err)
	}
}

// An agent that keeps exiting is restarted RestartLimit times, then the user is told once, with
// the restart command; the command starts it again.
func TestAgentThatKeepsExitingGivesUpThenRestartsByHand(t *testing.T) {
	const a = "file:///work/project/a.go"
	e := newEditor(t, harnessOpts{
		agentCfg: testagent.Config{Encoding: "utf-16"},
		cfg:      lspside.Config{RestartDelays: []time.Duration{10 * time.Millisecond}, RestartLimit: 2},
	})
	e.initialize("utf-16")
	e.Open(a, "x\n")
	for i := 0; i < 3; i++ {
		e.waitMirror(a, "x\n")
		e.mu.Lock()
		kill, starts := e.kill, e.starts
		e.mu.Unlock()
		kill()
		if i < 2 {
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				e.mu.Lock()
				n := e.starts
				e.mu.Unlock()
				if n > starts {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	e.WaitMessage("exited 3 times in 3m0s")
	e.WaitMessage("run the command acp-lsp-bridge.restart to try again")
	time.Sleep(100 * time.Millisecond)
	e.mu.Lock()
	starts := e.starts
	e.mu.Unlock()
	if starts != 3 {
		t.Fatalf("%d starts after giving up, want 3 (the first and two restarts)", starts)
	}
	if items, err := e.Inline(a, fakeeditor.At(0, 1)); err != nil || len(items) != 0 {
		t.Fatalf("with no agent: %+v, %v", items, err)
	}
	e.MustCall("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.restart"}, nil)
	e.waitMirror(a, "x\n")
	for _, m := range e.Record().Messages {
		if strings.Contains(m, "restarting the agent") {
			return
		}
	}
	t.Errorf("messages %q: want one saying the agent restarts", e.Record().Messages)
}
