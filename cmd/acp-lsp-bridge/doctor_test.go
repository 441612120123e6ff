package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestDoctorArgs(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		code    int
		done    bool
		command string
		stdout  string
		stderr  string
	}{
		{args: []string{"--json", "--timeout", "3s", "--", "agent", "--acp", "--json"}, command: "agent --acp --json"},
		{args: []string{"--verbose", "agent", "--flag"}, command: "agent --flag"},
		{args: []string{"--help"}, code: 0, done: true, stdout: "acp-lsp-bridge doctor [--json] [--timeout 20s] [--verbose] [--prompt] -- AGENT [ARGS...]"},
		// No agent named: the built-in one, as the bridge would run it.
		{args: []string{}, command: self + " agent"},
		{args: []string{"--json", "--"}, command: self + " agent"},
		{args: []string{"stray", "--", "agent"}, code: 2, done: true, stderr: `unexpected argument "stray"`},
		{args: []string{"--timeout", "0s", "--", "agent"}, code: 2, done: true, stderr: "--timeout 0s"},
		{args: []string{"--bogus", "--", "agent"}, code: 2, done: true, stderr: "flag provided but not defined"},
	} {
		var stdout, stderr bytes.Buffer
		opts, code, done := parseDoctorArgs(tc.args, &stdout, &stderr)
		if code != tc.code || done != tc.done {
			t.Errorf("%q: code %d done %v, want %d %v (stderr %q)", tc.args, code, done, tc.code, tc.done, stderr.String())
			continue
		}
		if !done && opts.command.String() != tc.command {
			t.Errorf("%q: command %q, want %q", tc.args, opts.command.String(), tc.command)
		}
		if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%q: stdout %q stderr %q", tc.args, stdout.String(), stderr.String())
		}
		if tc.code == 2 && stdout.Len() > 0 {
			t.Errorf("%q: a usage error wrote to stdout: %q", tc.args, stdout.String())
		}
	}
}
