//go:build unix

package e2e

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that signalGroup reaches everything it
// starts.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the process group that pid leads.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
