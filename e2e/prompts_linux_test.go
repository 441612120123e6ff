//go:build linux

package e2e

import (
	"testing"
	"time"
)

// TestPromptNoProcessLeft: the editor shuts the bridge down while the agent is busy with a prompt
// (an inline request in flight): the bridge exits 0, and the agent's process and the bridge's
// guard are gone within seconds.
func TestPromptNoProcessLeft(t *testing.T) {
	subreaper(t)
	s := startPromptSession(t, promptConfig{mode: "slow"})
	pending, _ := s.startInline(1)
	s.waitEvent(t, "prompt", 1)
	pids := append([]int{agentPID(t, s.agentLog)}, guardsOf(s.cmd.Process.Pid)...)
	if len(pids) < 2 {
		t.Errorf("the bridge (pid %d) runs no guard", s.cmd.Process.Pid)
	}
	s.Shutdown()
	if code := s.exitCode(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	waitGone(t, 5*time.Second, pids)
	select {
	case <-pending.Done():
	case <-time.After(5 * time.Second):
		t.Error("the inline request in flight never ended")
	}
}
