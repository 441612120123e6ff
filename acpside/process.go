package acpside

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// Command is how to start an agent: never through a shell.
type Command struct {
	Path string            `json:"command"`
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
	Dir  string            `json:"-"`
}

func (c Command) String() string {
	return strings.TrimSpace(c.Path + " " + strings.Join(c.Args, " "))
}

// process is a started agent in its own process group.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	exited chan struct{}
	err    error // valid after exited is closed
	// lifeline is the bridge's end of the guard's pipe (nil without a guard); closing it, or the
	// bridge ending in any way, makes the guard end the agent's process group.
	lifeline  *os.File
	guardDone chan struct{} // closed when the guard has exited (nil without a guard)

	mu   sync.Mutex
	tail []string // the last lines the agent wrote to stderr
}

// stderrTailLines is how many of the agent's last stderr lines are kept, to tell the user why an
// agent ended.
const stderrTailLines = 5

// stderrTail returns the last lines the agent wrote to stderr.
func (p *process) stderrTail() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.tail...)
}

func startProcess(c Command, log zerolog.Logger, events func(Event)) (*process, error) {
	if events == nil {
		events = func(Event) {}
	}
	if c.Path == "" {
		return nil, errors.New("no agent command")
	}
	path, err := exec.LookPath(c.Path)
	if err != nil {
		return nil, fmt.Errorf("agent command %q: %w", c.Path, err)
	}
	cmd := exec.Command(path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = os.Environ()
	for k, v := range c.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Its own process group, so that ending the agent ends the wrapper processes it started too,
	// and the kernel ends it if the bridge dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Plain pipes rather than StdoutPipe/StderrPipe: Wait must not close our read ends while the
	// last lines are still being read, and a grandchild holding stderr open must not delay Wait.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("start agent %q: %w", c.String(), err)
	}
	p := &process{cmd: cmd, stdin: stdin, stdout: outR, exited: make(chan struct{})}
	go func() {
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			log.Info().Str("dir", "agent stderr").Msg(line)
			events(Event{Kind: EventStderr, Line: line, At: time.Now()})
			if strings.TrimSpace(line) == "" {
				continue
			}
			p.mu.Lock()
			p.tail = append(p.tail, line)
			if len(p.tail) > stderrTailLines {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
		}
	}()
	if p.lifeline, p.guardDone, err = startGuard(cmd.Process.Pid); err != nil {
		log.Warn().Err(err).Msg("cannot start the guard that ends the agent's processes should the bridge be killed")
	}
	go func() {
		p.err = cmd.Wait()
		log.Info().Int("pid", cmd.Process.Pid).Str("status", exitStatus(p.err)).Msg("agent exited")
		events(Event{Kind: EventExited, Status: exitStatus(p.err), At: time.Now()})
		// What the agent started and left behind in its group ends with it.
		if p.lifeline != nil {
			p.lifeline.Close()
		}
		close(p.exited)
	}()
	log.Info().Int("pid", cmd.Process.Pid).Str("command", c.String()).Msg("agent started")
	return p, nil
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// kill ends the agent's whole process group at once (SIGKILL).
func (p *process) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// stop closes the agent's stdin, waits grace for it to exit, then ends its whole process group:
// SIGTERM, and SIGKILL a second later.
func (p *process) stop(grace time.Duration) {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(grace):
	}
	pgid := p.cmd.Process.Pid
	// The group may outlive its leader (wrapper processes): signal it in any case.
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(time.Second):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.exited
	// The guard, told by the leader's exit, finds the group gone and exits.
	if p.guardDone != nil {
		select {
		case <-p.guardDone:
		case <-time.After(3 * time.Second):
		}
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
