package e2e

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestBinaryNeverRunsTheAgentThroughAShell: shell syntax in the agent's arguments reaches the agent
// literally; nothing is expanded or run.
func TestBinaryNeverRunsTheAgentThroughAShell(t *testing.T) {
	_, agent := binaries(t)
	dir := t.TempDir()
	// What a POSIX shell, or cmd.exe on Windows (which allows no | in a file name), would run.
	name := "log;touch pwned1 $(touch pwned2) `touch pwned3` | cat.jsonl"
	if runtime.GOOS == "windows" {
		name = "log & copy nul pwned1 & copy nul pwned2 %PATH% ^& copy nul pwned3.jsonl"
	}
	agentLog := filepath.Join(dir, name)
	b := startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(), Options: agentOption(agent, "--log", agentLog)})
	waitAgentLog(t, agentLog, "nes/start") // the file with that literal name
	for _, name := range []string{"pwned1", "pwned2", "pwned3"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s exists: the agent's arguments went through a shell", name)
		}
	}
}
