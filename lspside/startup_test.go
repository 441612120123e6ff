package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"slices"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

// The agent starts in the background: initialize is answered while the agent is still starting,
// and until it is ready every surface answers with its empty result at once, without asking the
// agent; once it is ready the same request gets the suggestion. The agent here cannot answer its
// initialize before the test lets it, so nothing the editor got before that waited for it.
func TestRequestsBeforeTheAgentIsReadyAnswerEmptyAtOnce(t *testing.T) {
	const u = "file:///work/project/start.go"
	gate := make(chan struct{})
	released := false
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{
		Encoding:  "utf-16",
		StartGate: gate,
		Rules:     []testagent.Rule{{When: "hel", Find: "hel", Replace: "hello"}},
	}})
	t.Cleanup(func() {
		if !released {
			close(gate)
		}
	})
	// No inlineCompletion capability: the completion surface is on as well.
	e.initialize("utf-16")
	e.waitAgent("initialize", method(acp.AgentMethodInitialize)) // it is starting
	e.Open(u, "hel\n")

	items, err := e.Inline(u, fakeeditor.At(0, 3))
	if err != nil || items == nil || len(items) != 0 {
		t.Fatalf("inline completion while the agent starts: items %+v, err %v; want an empty list", items, err)
	}
	actions, err := e.CodeActions(u, lineStart(0))
	if err != nil || actions == nil || len(actions) != 0 {
		t.Fatalf("code actions while the agent starts: %+v, err %v; want []", actions, err)
	}
	var completion struct {
		Items []any `json:"items"`
	}
	if err := e.Call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": u}, "position": fakeeditor.At(0, 3)}, &completion); err != nil || completion.Items == nil || len(completion.Items) != 0 {
		t.Fatalf("completion while the agent starts: %+v, err %v; want no items", completion, err)
	}
	var inlineEdit struct {
		Edits []any `json:"edits"`
	}
	if err := e.Call("textDocument/copilotInlineEdit", map[string]any{"textDocument": map[string]any{"uri": u, "version": 1}, "position": fakeeditor.At(0, 3)}, &inlineEdit); err != nil || inlineEdit.Edits == nil || len(inlineEdit.Edits) != 0 {
		t.Fatalf("copilotInlineEdit while the agent starts: %+v, err %v; want no edits", inlineEdit, err)
	}
	// Asked by hand, the user is told why there is nothing.
	e.MustCall("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.suggest", "arguments": []any{map[string]any{"uri": u, "position": fakeeditor.At(0, 3)}}}, nil)
	e.WaitMessage("the agent is still starting")

	if got := methods(e.agent.Received()); !slices.Equal(got, []string{acp.AgentMethodInitialize}) {
		t.Fatalf("while starting the agent received %v, want only initialize", got)
	}
	log := e.logBuf.String()
	if n := strings.Count(log, "empty result: the agent is not ready"); n != 4 {
		t.Errorf("%d debug lines saying why a request answered empty, want one per request (4)", n)
	}
	if strings.Contains(log, `hel\n`) {
		t.Errorf("the log carries document text:\n%s", log)
	}

	close(gate)
	released = true
	e.WaitReady()
	items, err = e.Inline(u, fakeeditor.At(0, 3))
	if err != nil || len(items) != 1 || items[0].InsertText != "hello" {
		t.Fatalf("once the agent is ready: items %+v, err %v", items, err)
	}
}

// An editor that leaves while the agent is still starting ends the start: the agent is closed at
// once, not left running until its initialize answers or the start timeout (30 s) ends it.
func TestEditorLeavingWhileTheAgentStartsClosesIt(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{StartGate: gate}})
	e.initialize()
	e.waitAgent("initialize", method(acp.AgentMethodInitialize))
	e.mu.Lock()
	served := e.served
	e.mu.Unlock()
	e.toSrv.Close() // the editor goes away without shutdown
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's connection still runs 10 s after the editor left while it was starting")
	}
	if strings.Contains(e.logBuf.String(), `"level":"error"`) {
		t.Errorf("an editor leaving is not an error of the agent:\n%s", e.logBuf.String())
	}
}
