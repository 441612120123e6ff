package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestHelpNeovimExampleRunsAsWritten: the Neovim example in --help names only programs that
// exist once the bridge is installed (the bridge and its own agent), with flags the agent takes.
func TestHelpNeovimExampleRunsAsWritten(t *testing.T) {
	var out bytes.Buffer
	if code := Run(context.Background(), []string{"--help"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	m := regexp.MustCompile(`vim\.lsp\.config\('acp', \{ cmd = \{ ([^}]*) \}`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no Neovim example in --help:\n%s", out.String())
	}
	var words []string
	for _, w := range regexp.MustCompile(`'([^']*)'`).FindAllStringSubmatch(m[1], -1) {
		words = append(words, w[1])
	}
	if len(words) < 4 || words[0] != "acp-lsp-bridge" || words[1] != "--" || words[2] != "acp-lsp-bridge" || words[3] != "agent" {
		t.Fatalf("the example's command %q is not the bridge running its own agent", words)
	}
	// The agent's flags as written parse: the agent subcommand accepts them (it then waits for
	// ACP on stdin, which is empty here, and ends).
	var agentOut bytes.Buffer
	if code := Run(context.Background(), words[2+1:], strings.NewReader(""), &agentOut, &agentOut); code != 0 {
		t.Errorf("acp-lsp-bridge %s: exit %d: %s", strings.Join(words[3:], " "), code, agentOut.String())
	}
}
