package e2e

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own (the editors these tests start in groups
// run on Unix only).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup ends the process pid: Windows has no signals to send to a group.
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
