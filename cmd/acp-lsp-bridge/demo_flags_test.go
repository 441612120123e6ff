package main

import (
	"strings"
	"testing"
)

// TestDemoHelpAndBadArguments: demo --help and -h print its usage and run nothing (exit 0); an
// unknown flag or an extra argument is a usage error (exit 2) and runs nothing.
func TestDemoHelpAndBadArguments(t *testing.T) {
	bin := buildBridge(t)
	for _, args := range [][]string{{"demo", "--help"}, {"demo", "-h"}} {
		code, stdout, stderr := runBin(t, bin, nil, args...)
		if code != 0 || !strings.Contains(stdout, "Usage:\n  acp-lsp-bridge demo") || strings.Contains(stdout, "total(") || stderr != "" {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s\nwant the usage alone, exit 0", args, code, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"demo", "--bogus"}, {"demo", "extra"}} {
		code, stdout, stderr := runBin(t, bin, nil, args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "see --help") {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s\nwant a usage error, exit 2, nothing run", args, code, stdout, stderr)
		}
	}
}
