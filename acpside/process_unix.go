//go:build unix

package acpside

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// command resolves the agent's program on the PATH.
func command(c Command) (*exec.Cmd, error) {
	path, err := exec.LookPath(c.Path)
	if err != nil {
		return nil, fmt.Errorf("agent command \"%s\": %w", c.Path, err)
	}
	return exec.Command(path, c.Args...), nil
}

// prepare puts the agent in a process group of its own (and, on Linux, has the kernel end it
// should the bridge die: parentDeath).
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeath(cmd.SysProcAttr)
}

// groupTree is the agent's process group, with its guard.
type groupTree struct {
	pgid int
	// lifeline is the bridge's end of the guard's pipe; closing it, or the bridge ending in any
	// way, makes the guard end the group.
	lifeline  *os.File
	guardDone chan struct{} // closed when the guard has exited
}

// newTree groups the agent's processes. Without a guard (err says why) the group is still ended
// whenever the bridge lives to end it.
func newTree(cmd *exec.Cmd) (tree, error) {
	t := &groupTree{pgid: cmd.Process.Pid}
	var err error
	if t.lifeline, t.guardDone, err = startGuard(t.pgid); err != nil {
		return t, fmt.Errorf("the guard of the agent's processes: %w", err)
	}
	return t, nil
}

func (t *groupTree) terminate() { _ = syscall.Kill(-t.pgid, syscall.SIGTERM) }
func (t *groupTree) kill()      { _ = syscall.Kill(-t.pgid, syscall.SIGKILL) }

func (t *groupTree) leaderExited() {
	if t.lifeline != nil {
		t.lifeline.Close()
	}
}

// wait waits for the guard, told by the leader's exit, to find the group gone and exit.
func (t *groupTree) wait(d time.Duration) {
	if t.guardDone == nil {
		return
	}
	select {
	case <-t.guardDone:
	case <-time.After(d):
	}
}

// The guard of an agent's process group is a second process, the bridge's own executable started
// again with guardEnv naming the group: it waits until its stdin (the lifeline, a pipe whose
// other end only the bridge holds) reaches end of file, which happens when the agent's leader has
// exited or the bridge has ended, however it ended (even SIGKILL, which runs none of the bridge's
// code), and then ends the group: SIGTERM, and SIGKILL a second later. The agent's leader also has
// a parent-death signal, but that reaches only it, not the processes it started (a Node wrapper's
// native binary, an agent that relaunched itself).
const guardEnv = "ACP_LSP_BRIDGE_GUARD_PGID"

// guardArg is the guard's first argument, so that ps shows what it is.
const guardArg = "(agent guard)"

func init() {
	// Package initialization runs before the program's main: whatever program the bridge is
	// (the command, a test binary), started as a guard it does that and nothing else.
	if v := os.Getenv(guardEnv); v != "" {
		os.Exit(runGuard(v, os.Stdin))
	}
}

// runGuard is the guard's life: wait for the lifeline to end, then end the group pgid.
func runGuard(pgid string, lifeline io.Reader) int {
	g, err := strconv.Atoi(pgid)
	if err != nil || g <= 1 {
		fmt.Fprintf(os.Stderr, "%s=%q: not a process group\n", guardEnv, pgid)
		return 2
	}
	// The signals a terminal or an editor sends to the bridge's group must not end the guard
	// first (it has a group of its own, but a session's end reaches it too).
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	_, _ = io.Copy(io.Discard, lifeline)
	endGroup(g, time.Second)
	return 0
}

// endGroup ends the process group pgid: SIGTERM, then SIGKILL once grace has passed with any
// member still there.
func endGroup(pgid int, grace time.Duration) {
	if syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(-pgid, 0) == syscall.ESRCH {
			return
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// startGuard starts the guard of the process group pgid and returns the lifeline's write end and
// a channel closed when the guard has exited.
func startGuard(pgid int) (*os.File, chan struct{}, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	cmd := exec.Command(exe, guardArg)
	cmd.Env = append(os.Environ(), guardEnv+"="+strconv.Itoa(pgid))
	cmd.Stdin = r
	cmd.Dir = "/"
	// A group of its own: a signal to the bridge's group (Ctrl-C in a terminal) leaves it be.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	return w, done, nil
}
