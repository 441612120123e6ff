package acpside

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// deafTree is a process tree that stop cannot end: its kill and terminate do nothing.
type deafTree struct{ tree }

func (deafTree) terminate() {}
func (deafTree) kill()      {}

// TestStopGoesOnWhenTheKillFails: an agent whose process outlives the kill (a platform that
// failed to end it) does not keep the bridge from exiting: stop returns and the log says so.
func TestStopGoesOnWhenTheKillFails(t *testing.T) {
	defer func(d time.Duration) { killWait = d }(killWait)
	killWait = 100 * time.Millisecond
	var real tree
	wrapTree = func(t tree) tree {
		real = t
		return deafTree{t}
	}
	defer func() { wrapTree = nil }()
	var logs testutil.SyncBuffer
	p, err := startProcess(Command{Path: os.Args[0], Env: map[string]string{"ACPSIDE_TEST_DEAF_AGENT": "1"}}, zerolog.New(&logs), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		real.kill()
		<-p.exited
		real.wait(10 * time.Second)
		_ = p.stdout.Close()
	}()
	stopped := make(chan struct{})
	go func() {
		p.stop(0)
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		t.Fatal("stop waits for a process that the kill did not end")
	}
	select {
	case <-p.exited:
		t.Fatal("the agent's process ended by itself: the test shows nothing")
	default:
	}
	if !strings.Contains(logs.String(), "still there after it was killed") {
		t.Errorf("the log does not say that the agent's process outlived the kill:\n%s", logs.String())
	}
}
