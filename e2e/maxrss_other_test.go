//go:build !linux

package e2e

import (
	"os/exec"
	"testing"
)

// runAsSmallParent has nothing to do here: the one test that reads a program's peak memory runs on
// Linux only.
func runAsSmallParent() {}

// commandWithOwnPeak is not used here: the one test that reads a program's peak memory runs on
// Linux only.
func commandWithOwnPeak(t *testing.T, name string, args ...string) (*exec.Cmd, func() int64) {
	t.Helper()
	t.Fatal("a program's peak memory is read on Linux only")
	return nil, nil
}
