package acpside

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// command resolves the agent's program on the PATH (with PATHEXT). An npm cmd shim is replaced
// by what it runs (shim.go); any other batch file runs through cmd.exe with every argument
// quoted, and an argument that quoting cannot make safe is refused.
func command(c Command) (*exec.Cmd, error) {
	path, err := exec.LookPath(c.Path)
	if err != nil {
		return nil, fmt.Errorf("agent command \"%s\": %w", c.Path, err)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".cmd" && ext != ".bat" {
		return exec.Command(path, c.Args...), nil
	}
	if text, err := os.ReadFile(path); err == nil {
		prog, argv, err := shimCommand(path, string(text), c.Args, func(p string) bool { _, err := os.Stat(p); return err == nil })
		if err == nil {
			if !filepath.IsAbs(prog) {
				if prog, err = exec.LookPath(prog); err != nil {
					return nil, fmt.Errorf("agent command \"%s\" is an npm shim for node, which is not on the PATH: %w", c.Path, err)
				}
			}
			return exec.Command(prog, argv...), nil
		}
	}
	comspec := os.Getenv("ComSpec")
	if comspec == "" {
		comspec = filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	}
	line, err := batchCommandLine(comspec, path, c.Args)
	if err != nil {
		return nil, fmt.Errorf("agent command \"%s\": %w", c.Path, err)
	}
	cmd := exec.Command(comspec)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: line}
	return cmd, nil
}

// prepare starts the agent without a console window of its own (an editor without a console
// would otherwise open one) and in a new process group.
func prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP
	cmd.SysProcAttr.HideWindow = true
}

// jobTree is the agent in a Job Object that kills every process in it when its last handle
// closes: the bridge ending, however it ends, ends the agent and everything it started. (A
// process the agent starts in the moment between its start and its assignment to the job is not
// in the job; Node agents start nothing that early.)
type jobTree struct {
	mu     sync.Mutex
	job    windows.Handle
	closed bool
}

func newTree(cmd *exec.Cmd) (tree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("CreateJobObject: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("SetInformationJobObject: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("OpenProcess: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	return &jobTree{job: job}, nil
}

// terminate: Windows has no gentler end for a console program than its stdin closing, which
// stop did first; the job ends.
func (t *jobTree) terminate() { t.kill() }

func (t *jobTree) kill() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		_ = windows.TerminateJobObject(t.job, 1)
	}
}

// leaderExited closes the job: what the agent left running in it ends.
func (t *jobTree) leaderExited() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		_ = windows.CloseHandle(t.job)
	}
}

func (*jobTree) wait(time.Duration) {}
