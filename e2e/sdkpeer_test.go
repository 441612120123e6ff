// Package e2e holds end-to-end tests that run the built bridge against third-party peers.
package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// moduleRoot is the folder holding go.mod, found from this file's location.
func moduleRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	root := filepath.Dir(filepath.Dir(file))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod in %s: %v", root, err)
	}
	return root
}

// TestSDKPeer runs testdata/peers/lsp-e2e.mjs: Microsoft's LSP client library drives the
// bridge, whose agent is testdata/peers/nes-agent.mjs, written with the official ACP SDK
// (which validates every message the bridge sends). The script opens and edits documents with
// non-ASCII text and mixed line endings, asks for inline completions, accepts one, and then
// checks the agent's mirror after every event, the positions in nes/suggest, the completion
// items, nes/accept and nes/reject. The script prints each failed check with the expected
// and the actual value.
func TestSDKPeer(t *testing.T) {
	modules := os.Getenv("PEERS_NODE_MODULES")
	if modules == "" {
		skipWithoutPeer(t, "PEERS_NODE_MODULES is not set (eval \"$(../shared/tools/install-test-peers.sh)\")")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipWithoutPeer(t, "node is not on PATH")
	}
	root := moduleRoot(t)
	script := filepath.Join(root, "testdata", "peers", "lsp-e2e.mjs")

	bridge, _ := binaries(t)

	cases := []struct {
		name string
		args []string
	}{
		{"incremental-utf16-agent/utf16-editor",
			[]string{"--agent-sync", "incremental", "--agent-encoding", "utf-16", "--encodings", "utf-16"}},
		{"incremental-utf32-agent/utf8+utf16-editor",
			[]string{"--agent-sync", "incremental", "--agent-encoding", "utf-32", "--encodings", "utf-8,utf-16"}},
		{"full-utf8-agent/utf16-editor",
			[]string{"--agent-sync", "full", "--agent-encoding", "utf-8", "--encodings", "utf-16"}},
		{"incremental-utf8-agent/no-encodings-editor/agent-from-initializationOptions",
			[]string{"--agent-sync", "incremental", "--agent-encoding", "utf-8", "--encodings", "none", "--agent-via", "initopts"}},
		// The editor edits before the agent has started, as real editors do.
		{"incremental-utf32-agent/utf8+utf16-editor/early-edits",
			[]string{"--agent-sync", "incremental", "--agent-encoding", "utf-32", "--encodings", "utf-8,utf-16", "--early"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
			defer cancel()
			args := append([]string{script, "--bridge", bridge, "--timeout-ms", "18000"}, tc.args...)
			cmd := exec.CommandContext(ctx, node, args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "PEERS_NODE_MODULES="+modules)
			var out bytes.Buffer
			cmd.Stdout = &out
			cmd.Stderr = &out
			cmd.WaitDelay = 2 * time.Second
			err := cmd.Run()
			if err != nil {
				t.Fatalf("lsp-e2e.mjs %v: %v\n%s", tc.args, err, out.String())
			}
			t.Logf("%s", out.String())
		})
	}
}
