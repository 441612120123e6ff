//go:build unix && !linux

package acpside

import "syscall"

// parentDeath: there is no parent-death signal here (macOS, the BSDs); the guard ends the whole
// group, the agent's own process included, should the bridge die.
func parentDeath(*syscall.SysProcAttr) {}
