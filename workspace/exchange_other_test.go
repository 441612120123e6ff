//go:build !linux

package workspace

import "syscall"

func renameExchange(a, b string) error { return syscall.ENOSYS }
