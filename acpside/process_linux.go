package acpside

import "syscall"

// parentDeath has the kernel kill the agent's own process when the thread that started it ends
// (the bridge dying); the guard ends the rest of its group.
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
