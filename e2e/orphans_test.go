//go:build linux

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestNoProcessOutlivesTheBridge: agents that leave processes behind as npm agents do (a wrapper
// whose helper ignores SIGTERM and the end of its stdin, as codex-acp's native binary does; and
// an agent that relaunches itself, as gemini-cli does) are ended with every process they started,
// whatever state the agent is in when the session ends (starting, waiting for the user to sign
// in, waiting to be restarted after it exited, ready, being closed after shutdown) and however it ends (shutdown and exit, the
// editor closing the pipe, SIGTERM, SIGINT, and SIGKILL, which runs none of the bridge's code).
// Every process the agent started, and the bridge's guard, is gone within a few seconds.
//
// This test process makes itself the subreaper of what it starts, as init is on a user's machine:
// an orphan left by a killed bridge is then its child, and it reaps what has ended.
func TestNoProcessOutlivesTheBridge(t *testing.T) {
	subreaper(t)
	_, agent := binaries(t)
	type stage struct {
		name string
		args []string
		// reach brings the session to the stage, once the editor has opened a document.
		reach func(t *testing.T, b *bridgeProc, uri string)
	}
	stages := []stage{
		{"starting", []string{"--start-delay", "60s"}, func(t *testing.T, b *bridgeProc, uri string) {}},
		{"ready", nil, func(t *testing.T, b *bridgeProc, uri string) { b.waitMessage("acp-test-agent is ready") }},
		{"signing in", []string{"--auth"}, nil}, // reached through the question, below
		{"restarting", []string{"--fault", "exit"}, func(t *testing.T, b *bridgeProc, uri string) {
			b.waitMessage("acp-test-agent is ready")
			go func() {
				var res any
				_ = b.Editor.Call(context.Background(), "textDocument/inlineCompletion", map[string]any{
					"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": 1},
				}, &res)
			}()
			b.waitMessage("acp-test-agent exited")
		}},
	}
	// Closing: shutdown has been answered and the bridge is ending an agent that reads nothing
	// (its helper ignoring SIGTERM keeps the group for a second after the agent itself ends).
	stages = append(stages, stage{"closing", []string{"--stall", "60s"}, func(t *testing.T, b *bridgeProc, uri string) {
		b.waitMessage("acp-test-agent is ready")
		if err := b.Call("shutdown", nil, nil); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	}})
	endings := []string{"exit", "eof", "SIGTERM", "SIGINT", "SIGKILL"}
	for i, st := range stages {
		for j, end := range endings {
			// Half the cases run the agent that relaunches itself, each stage and ending with one
			// of the two kinds.
			relaunch := (i+j)%2 == 1
			name := st.name + "/" + end
			if relaunch {
				name += "/relaunched"
			}
			t.Run(name, func(t *testing.T) {
				if end != "SIGKILL" && end != "exit" {
					skipIfShort(t, "every way of ending a session in every state")
				}
				t.Parallel()
				dir := t.TempDir()
				pidFile := filepath.Join(dir, "pids")
				args := append([]string{"--pid-file", pidFile, "--spawn-helper"}, st.args...)
				if relaunch {
					args = append(args, "--relaunch")
				}
				b := startBridge(t)
				asked := make(chan struct{}, 1)
				released := make(chan struct{})
				t.Cleanup(func() { close(released) })
				b.setAnswer(func(message string, _ []string) string {
					asked <- struct{}{}
					<-released // the user never answers
					return ""
				})
				root := fileURI(dir)
				b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(), Options: agentOption(agent, args...)})
				uri := root + "/a.go"
				b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "a\n"}})
				if st.reach != nil {
					st.reach(t, b, uri)
				} else {
					select {
					case <-asked:
					case <-time.After(15 * time.Second):
						t.Fatal("the user was never asked to sign in")
					}
				}
				want := "agent"
				if relaunch {
					want = "relauncher"
				}
				pids := waitPIDs(t, pidFile, want, "agent", "helper")
				guards := guardsOf(b.cmd.Process.Pid)
				if len(guards) == 0 {
					t.Errorf("the bridge (pid %d) runs no guard", b.cmd.Process.Pid)
				}
				pids = append(pids, guards...)

				switch {
				case end == "exit" && st.name == "closing":
					b.Notify("exit", nil)
				case end == "exit":
					b.Shutdown()
				case end == "eof":
					_ = b.stdin.Close()
				default:
					sig := map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT, "SIGKILL": syscall.SIGKILL}[end]
					if err := b.cmd.Process.Signal(sig); err != nil {
						t.Fatal(err)
					}
				}
				b.exitCode() // however it ended; what counts is that it did
				// Later processes (a restarted agent and its helper) count too.
				for _, pid := range readPIDs(pidFile) {
					if !slices.Contains(pids, pid) {
						pids = append(pids, pid)
					}
				}
				waitGone(t, 5*time.Second, pids)
			})
		}
	}
}

// subreaper makes this process the child subreaper of the processes it starts (prctl
// PR_SET_CHILD_SUBREAPER) for the test's duration.
func subreaper(t *testing.T) {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
	t.Cleanup(func() { _, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0) })
}

// guardsOf lists the guard processes that the bridge pid started.
func guardsOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := procStat(child)
		if !ok || st.ppid != pid {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmdline, []byte("\x00(agent guard)")) {
			out = append(out, child)
		}
	}
	return out
}

type procState struct {
	state byte
	ppid  int
}

// procStat reads a process's state and parent from /proc; false when it does not exist.
func procStat(pid int) (procState, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procState{}, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 2 {
		return procState{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return procState{state: f[0][0], ppid: ppid}, true
}

// waitGone waits until none of pids runs. A process that ended and whose parent is this test (an
// orphan it took in as subreaper) is reaped, as init would; one that ended and stays a zombie of
// another parent, or one still running at the deadline, fails the test.
func waitGone(t *testing.T, timeout time.Duration, pids []int) {
	t.Helper()
	self := os.Getpid()
	deadline := time.Now().Add(timeout)
	for {
		var running, zombies []string
		for _, pid := range pids {
			st, ok := procStat(pid)
			switch {
			case !ok:
			case st.state == 'Z' && st.ppid == self:
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			case st.state == 'Z':
				zombies = append(zombies, fmt.Sprintf("%d (parent %d)", pid, st.ppid))
			default:
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				running = append(running, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
			}
		}
		if len(running) == 0 && len(zombies) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after the session ended: still running %v; zombies %v", timeout, running, zombies)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
