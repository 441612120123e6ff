package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// peakRSS is the peak resident memory of an ended process, in bytes (Linux counts ru_maxrss in KiB).
func peakRSS(ps *os.ProcessState) int64 {
	return ps.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// peakFileEnv, set, makes the test binary the parent of one program (runAsSmallParent): Linux
// keeps, as a program's peak resident memory, the peak of the memory exec replaced, and Go starts a
// program from its parent's memory, so a program started straight from the test process reads as
// at least that process's own peak (over 100 MB once the tests before it have run).
const peakFileEnv = "ACP_LSP_BRIDGE_E2E_PEAK_FILE"

// runAsSmallParent, in a test binary started by commandWithOwnPeak, runs the program its arguments
// name on its own standard streams, writes the program's peak resident memory (bytes) to the file
// peakFileEnv names, and exits with the program's code. Otherwise it returns at once.
func runAsSmallParent() {
	out := os.Getenv(peakFileEnv)
	if out == "" || len(os.Args) < 2 {
		return
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Should the test kill this parent (a program that does not exit), the program goes with it.
	// The signal follows the thread that started it, so that thread is kept.
	runtime.LockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, peakFileEnv+"=") })
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(127)
	}
	// The program alone reads the input: when it stops reading, the writer sees the pipe closed.
	_ = os.Stdin.Close()
	_ = cmd.Wait()
	if err := os.WriteFile(out, []byte(strconv.FormatInt(peakRSS(cmd.ProcessState), 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(127)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}

// commandWithOwnPeak is exec.Command(name, args...) started through the test binary as a small
// parent, so that peak, once the command has ended, is the program's own peak resident memory, not
// the test process's. The command's exit code is the program's.
func commandWithOwnPeak(t *testing.T, name string, args ...string) (cmd *exec.Cmd, peak func() int64) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "peak")
	cmd = exec.Command(self, append([]string{name}, args...)...)
	cmd.Env = append(os.Environ(), peakFileEnv+"="+file)
	return cmd, func() int64 {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("the program's peak memory: %v", err)
		}
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			t.Fatalf("the program's peak memory: %v", err)
		}
		return n
	}
}
