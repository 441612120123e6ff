package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBinaryNeverRunsTheAgentThroughAShell: shell syntax in the agent's arguments reaches the agent
// literally; nothing is expanded or run.
func TestBinaryNeverRunsTheAgentThroughAShell(t *testing.T) {
	_, agent := binaries(t)
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "log;touch pwned1 $(touch pwned2) `touch pwned3` | cat.jsonl")
	b := startBridge(t)
	if err := b.call("initialize", map[string]any{
		"processId": os.Getpid(), "rootUri": "file://" + dir, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"agent": map[string]any{"command": agent, "args": []string{"--log", agentLog}}},
	}, nil); err != nil {
		t.Fatal(err)
	}
	b.notify("initialized", map[string]any{})
	waitAgentLog(t, agentLog, "nes/start") // the file with that literal name
	for _, name := range []string{"pwned1", "pwned2", "pwned3"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s exists: the agent's arguments went through a shell", name)
		}
	}
}
