package acpside

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// Command is how to start an agent: never through a shell.
type Command struct {
	Path string            `json:"command"`
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
	Dir  string            `json:"-"`
}

func (c Command) String() string {
	// A key given where its variable's name belongs is not written out (workspace.HideKeyEnv).
	return strings.TrimSpace(c.Path + " " + strings.Join(workspace.HideKeyEnv(c.Args), " "))
}

// process is a started agent in its own process group.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	exited chan struct{}
	err    error // valid after exited is closed
	// tree is the agent's processes as the platform groups them (process_unix.go,
	// process_windows.go).
	tree tree

	log zerolog.Logger

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
	cmd, err := command(c)
	if err != nil {
		return nil, err
	}
	cmd.Dir = c.Dir
	cmd.Env = os.Environ()
	for k, v := range c.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// A group of its own (a process group, a job), so that ending the agent ends the wrapper
	// processes it started too.
	prepare(cmd)
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
		return nil, fmt.Errorf("start agent \"%s\": %w", c.String(), err)
	}
	p := &process{cmd: cmd, stdin: stdin, stdout: outR, exited: make(chan struct{}), log: log}
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
	if p.tree, err = newTree(cmd); err != nil {
		log.Warn().Err(err).Msg("the agent's processes are not fully grouped; should the bridge be killed, those it started may live on")
		if p.tree == nil {
			p.tree = leaderOnly{cmd.Process}
		}
	}
	if wrapTree != nil {
		p.tree = wrapTree(p.tree)
	}
	go func() {
		p.err = cmd.Wait()
		log.Info().Int("pid", cmd.Process.Pid).Str("status", exitStatus(p.err)).Msg("agent exited")
		events(Event{Kind: EventExited, Status: exitStatus(p.err), At: time.Now()})
		// What the agent started and left behind in its group ends with it.
		p.tree.leaderExited()
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

// kill ends the agent's whole tree at once.
func (p *process) kill() { p.tree.kill() }

// killWait is how long stop waits for the agent's process to be gone once it has been killed.
// Past it the bridge goes on without it (and says so) rather than never exiting. A variable for
// the tests.
var killWait = 5 * time.Second

// stop closes the agent's stdin, waits grace for it to exit, then ends its whole tree: gently
// where the platform can (SIGTERM to the group), and for good a second later.
func (p *process) stop(grace time.Duration) {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(grace):
	}
	// The tree may outlive its leader (wrapper processes): end it in any case.
	p.tree.terminate()
	select {
	case <-p.exited:
	case <-time.After(time.Second):
	}
	p.tree.kill()
	select {
	case <-p.exited:
	case <-time.After(killWait):
		p.log.Error().Int("pid", p.cmd.Process.Pid).Msg("the agent's process is still there after it was killed; the bridge goes on without waiting for it")
		return
	}
	p.tree.wait(3 * time.Second)
}

// wrapTree, when set (by tests only), wraps the tree of each agent started.
var wrapTree func(tree) tree

// tree is the agent's processes as the platform groups them: a process group and its guard on
// Unix (process_unix.go), a Job Object on Windows (process_windows.go).
type tree interface {
	// terminate asks every process of the tree to end.
	terminate()
	// kill ends every process of the tree at once.
	kill()
	// leaderExited is called once the agent's own process has been waited for: what it left
	// behind ends.
	leaderExited()
	// wait waits, at most d, until nothing of the tree's own machinery runs.
	wait(d time.Duration)
}

// leaderOnly is the tree of an agent whose processes could not be grouped: only its own process
// is ended.
type leaderOnly struct{ p *os.Process }

func (l leaderOnly) terminate()       { _ = l.p.Kill() }
func (l leaderOnly) kill()            { _ = l.p.Kill() }
func (leaderOnly) leaderExited()      {}
func (leaderOnly) wait(time.Duration) {}
