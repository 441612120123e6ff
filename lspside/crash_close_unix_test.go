//go:build unix

package lspside_test

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestAnAgentThatHungUpIsEnded: an agent that closes its output while it runs (wedged after a
// fault) is told as exited, and the bridge ends its process: it does not stay behind, holding
// what it holds, until the editor leaves.
func TestAnAgentThatHungUpIsEnded(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	e := crashAtTheFirstRequest(t, map[string]string{hangUpAgentEnv: pidFile})
	e.WaitMessage("exited")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the agent wrote no process id: %v", err)
	}
	pid, err := strconv.Atoi(string(data))
	if err != nil {
		t.Fatal(err)
	}
	// Not a speed check: the bridge gives a process 2 s to end on its own before it ends it.
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the agent's process %d still runs 20 s after the bridge told the editor it exited", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
