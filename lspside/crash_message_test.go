package lspside_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// crashingAgentEnv, set, makes this test binary the crashing agent (TestMain).
const crashingAgentEnv = "LSPSIDE_TEST_CRASHING_AGENT"

// crashingAgent is the scripted agent on stdin and stdout, in a process of its own: on its first
// nes/suggest it writes two lines to stderr and exits with status 3, as an agent that runs out of
// memory does.
func crashingAgent() {
	testagent.New(testagent.Config{Encoding: "utf-16", Fault: testagent.FaultExit, Exit: func(code int) {
		fmt.Fprintln(os.Stderr, "acp-test-agent: loading the model")
		fmt.Fprintln(os.Stderr, "acp-test-agent: out of memory")
		os.Exit(code)
	}}).Serve(os.Stdin, os.Stdout)
	os.Exit(0)
}

// TestRunningAgentsCrashIsToldWithItsStatusAndLastWords: an agent that was ready and then exits
// is told as one that exits before answering initialize is: its exit status and the last lines it
// wrote to stderr, then that it is restarted.
func TestRunningAgentsCrashIsToldWithItsStatusAndLastWords(t *testing.T) {
	const u = "file:///work/project/a.go"
	started := make(chan *acpside.Agent, 1)
	e := newEditor(t, harnessOpts{noAgent: true, cfg: lspside.Config{
		RestartDelays: []time.Duration{time.Minute}, // told, not yet restarted, when the test ends
		ConnectAgent: func(opts acpside.Options) (*acpside.Agent, error) {
			a, err := acpside.Start(acpside.Command{Path: os.Args[0], Env: map[string]string{crashingAgentEnv: "1"}}, opts)
			if err == nil {
				started <- a
			}
			return a, err
		},
	}})
	// The bridge closes no agent that exited by itself: closing it here waits for its process
	// group's guard, which outlives it for a moment (a second under the race detector), to be gone
	// before the package's leak check.
	defer func() {
		select {
		case a := <-started:
			a.Close(context.Background())
		default:
		}
	}()
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(u, "x\n")
	if items, err := e.Inline(u, fakeeditor.At(0, 1)); err != nil || len(items) != 0 {
		t.Fatalf("the request the agent exits on: %+v, %v", items, err)
	}
	e.WaitMessage("acp-test-agent exited")
	var said string
	for _, m := range e.Record().Messages {
		if strings.Contains(m, "exited") {
			said = m
		}
	}
	want := "acp-lsp-bridge: acp-test-agent exited (exit status 3). It wrote: acp-test-agent: loading the model | acp-test-agent: out of memory. Restarting it."
	if said != want {
		t.Errorf("the editor was told %q, want %q", said, want)
	}
}
