package lspside_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// crashingAgentEnv, set, makes this test binary the crashing agent (TestMain); with
// hangUpAgentEnv set too (to a file's path), the agent that hangs up and stays.
const (
	crashingAgentEnv = "LSPSIDE_TEST_CRASHING_AGENT"
	hangUpAgentEnv   = "LSPSIDE_TEST_HANG_UP_AGENT"
)

// hangUpAgent is the scripted agent that, on its first nes/suggest, writes its process id to
// pidFile, closes its output and stays, reading nothing more: an agent wedged after a fault, as
// one stuck in a driver call is, which holds its memory until something ends it.
func hangUpAgent(pidFile string) {
	testagent.New(testagent.Config{Encoding: "utf-16", Fault: testagent.FaultExit, Exit: func(int) {
		_ = os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644)
		_ = os.Stdout.Close()
		select {}
	}}).Serve(os.Stdin, os.Stdout)
	select {} // its input ended or its output failed: it stays all the same
}

// crashingAgent is the scripted agent on stdin and stdout, in a process of its own: on its first
// nes/suggest it writes two lines to stderr and exits with status 3, as an agent that runs out of
// memory does.
func crashingAgent() {
	if pidFile := os.Getenv(hangUpAgentEnv); pidFile != "" {
		hangUpAgent(pidFile)
	}
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
	e := crashAtTheFirstRequest(t, nil)
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

// crashAtTheFirstRequest runs the crashing agent (with env besides) in a process of its own behind
// a ready bridge, and asks it for a suggestion in a document it knows: the request it exits (or
// hangs up) on, answered empty.
func crashAtTheFirstRequest(t *testing.T, env map[string]string) *editor {
	t.Helper()
	const u = "file:///work/project/a.go"
	agentEnv := map[string]string{crashingAgentEnv: "1"}
	for k, v := range env {
		agentEnv[k] = v
	}
	started := make(chan *acpside.Agent, 1)
	e := newEditor(t, harnessOpts{noAgent: true, cfg: lspside.Config{
		RestartDelays: []time.Duration{time.Minute}, // told, not yet restarted, when the test ends
		ConnectAgent: func(opts acpside.Options) (*acpside.Agent, error) {
			a, err := acpside.Start(acpside.Command{Path: os.Args[0], Env: agentEnv}, opts)
			if err == nil {
				started <- a
			}
			return a, err
		},
	}})
	// The bridge closes an agent that exited by itself once it has told the editor; closing it
	// here too waits for that Close, which waits for the process group's guard (it outlives the
	// agent for a moment, a second under the race detector), before the package's leak check;
	// and ends the agent if the bridge did not.
	t.Cleanup(func() {
		select {
		case a := <-started:
			a.Close(context.Background())
		default:
		}
	})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(u, "x\n")
	if items, err := e.Inline(u, fakeeditor.At(0, 1)); err != nil || len(items) != 0 {
		t.Fatalf("the request the agent ends on: %+v, %v", items, err)
	}
	return e
}
