package e2e

import (
	"os"
	"syscall"
)

// peakRSS is the peak resident memory of an ended process, in bytes (Linux counts ru_maxrss in KiB).
func peakRSS(ps *os.ProcessState) int64 {
	return ps.SysUsage().(*syscall.Rusage).Maxrss << 10
}
