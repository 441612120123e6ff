package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestSDKPeerProtocolVersion2: an agent on the official ACP SDK that speaks the protocol version 2
// draft of NES (testdata/peers/nes-v2-agent.mjs): its suggestion named by suggestionId is shown
// and, accepted, changes the buffer; its suggestion of a kind the bridge does not know is left out
// without failing the answer; nes/accept and nes/reject name the suggestions by suggestionId, as
// the agent's version does.
func TestSDKPeerProtocolVersion2(t *testing.T) {
	node, modules := sdkPeer(t)
	dir := t.TempDir()
	agentLog := filepath.Join(t.TempDir(), "agent.jsonl")
	b := startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(), Options: map[string]any{"agent": map[string]any{
		"command": node,
		"args":    []string{filepath.Join(moduleRoot(t), "testdata", "peers", "nes-v2-agent.mjs")},
		"env":     map[string]string{"PEERS_NODE_MODULES": modules, "V2_AGENT_LOG": agentLog},
	}}})
	b.WaitReady()
	uri := fileURI(filepath.Join(dir, "a.go"))
	b.Open(uri, "package a\n\n// TODO: ship\n")
	items, err := b.InlineTriggered(uri, fakeeditor.At(2, 3), 1)
	if err != nil {
		t.Fatalf("inline completion: %v", err)
	}
	if len(items) != 1 {
		t.Fatalf("%d inline items, want the agent's edit alone: %+v", len(items), items)
	}
	b.Accept(uri, items[0])
	if got, want := b.Text(uri), "package a\n\n// DONE: ship\n"; got != want {
		t.Fatalf("after accepting, the buffer reads %q, want %q", got, want)
	}
	// The agent heard nes/accept for the edit and nes/reject for the note, each by suggestionId.
	ended := map[string]string{}
	deadline := time.Now().Add(10 * time.Second)
	for len(ended) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		for _, m := range readAgentLog(t, agentLog) {
			if p, ok := m["params"].(map[string]any); ok && (m["method"] == "nes/accept" || m["method"] == "nes/reject") {
				id, _ := p["suggestionId"].(string)
				ended[id] = m["method"].(string)
			}
		}
	}
	if ended["v2-edit"] != "nes/accept" || ended["v2-note"] != "nes/reject" {
		t.Errorf("the agent heard %v, want nes/accept of v2-edit and nes/reject of v2-note by suggestionId", ended)
	}
	for _, m := range readAgentLog(t, agentLog) {
		if _, ok := m["issue"]; ok {
			t.Errorf("the agent found: %v", m)
		}
	}
	waitBridgeLog(t, b.logFile, "ignoring a suggestion of a kind the bridge does not know")
}
