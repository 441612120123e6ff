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

func startProcess(c Command, log zerolog.Logger) (*process, error) {
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
	go func() {
		p.err = cmd.Wait()
		log.Info().Int("pid", cmd.Process.Pid).Str("status", exitStatus(p.err)).Msg("agent exited")
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
}
