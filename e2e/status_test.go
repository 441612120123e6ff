package e2e

import (
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestBinaryStatusWhileTheAgentStarts: an agent slow to start (2 s): the editor, which supports
// work-done progress, hears acp-lsp-bridge/status "starting" and sees a progress "starting the
// agent…" begun, then ended when the status turns "ready".
func TestBinaryStatusWhileTheAgentStarts(t *testing.T) {
	_, agent := binaries(t)
	b := startBridge(t, "--", agent, "--start-delay", "2s")
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(t.TempDir()), Capabilities: map[string]any{
		"window": map[string]any{"workDoneProgress": true, "showDocument": map[string]any{"support": true}},
	}})
	b.Await(fakeeditor.StatusIs("starting", ""))
	b.Await(fakeeditor.StatusIs("ready", ""))
	b.Await(fakeeditor.Expectation{Description: "the start's progress begun and ended", Met: func(r *fakeeditor.Record) bool {
		p := r.ProgressOf("starting the agent…")
		return len(p) > 0 && p[len(p)-1].Value.Kind == "end"
	}})
	rec := b.Record()
	var states []string
	for _, st := range rec.Statuses {
		states = append(states, st.State)
	}
	if got := strings.Join(states, " "); got != "starting ready" {
		t.Errorf("statuses %q, want starting then ready", got)
	}
	if last := rec.Statuses[len(rec.Statuses)-1]; last.Agent != "acp-test-agent" || !strings.Contains(last.Message, "acp-test-agent is ready") {
		t.Errorf("the ready status %+v", last)
	}
}
