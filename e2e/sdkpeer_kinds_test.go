package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSDKPeerKinds runs testdata/peers/lsp-kinds-e2e.mjs: Microsoft's LSP client library drives
// the bridge, whose agent is testdata/peers/nes-agent.mjs in kinds mode (the official ACP SDK,
// validating every message the bridge sends). The agent answers with every suggestion kind
// (an edit of the document, an edit of another file with a cursor position, a jump, a rename,
// a search-and-replace in the document, over the workspace folder with a regular expression,
// outside the workspace, and several at once), and the editor checks each surface: code
// actions (titles, kinds, WorkspaceEdits applied to its own copies of the texts), completion
// items, Copilot-style inline edits, and the accept, reject and suggest commands, with
// window/showDocument, window/showMessageRequest and workspace/applyEdit. Every suggestion id
// must end exactly once, the way the editor ended it. The script prints each failed check with
// the expected and the actual value.
func TestSDKPeerKinds(t *testing.T) {
	modules := os.Getenv("PEERS_NODE_MODULES")
	if modules == "" {
		skipWithoutPeer(t, "PEERS_NODE_MODULES is not set (eval \"$(../shared/tools/install-test-peers.sh)\")")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipWithoutPeer(t, "node is not on PATH")
	}
	root := moduleRoot(t)
	script := filepath.Join(root, "testdata", "peers", "lsp-kinds-e2e.mjs")

	bridge, _ := binaries(t)

	cases := []struct {
		name string
		args []string
	}{
		{"utf16-editor/utf32-agent/changes",
			[]string{"--encodings", "utf-16", "--agent-encoding", "utf-32", "--document-changes", "off"}},
		{"utf16-editor/utf8-agent/documentChanges",
			[]string{"--encodings", "utf-16", "--agent-encoding", "utf-8", "--document-changes", "on"}},
		{"utf8-editor/utf16-agent/documentChanges",
			[]string{"--encodings", "utf-8,utf-16", "--agent-encoding", "utf-16", "--document-changes", "on"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
			defer cancel()
			args := append([]string{script, "--bridge", bridge, "--timeout-ms", "80000"}, tc.args...)
			cmd := exec.CommandContext(ctx, node, args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "PEERS_NODE_MODULES="+modules)
			var out bytes.Buffer
			cmd.Stdout = &out
			cmd.Stderr = &out
			cmd.WaitDelay = 2 * time.Second
			if err := cmd.Run(); err != nil {
				t.Fatalf("lsp-kinds-e2e.mjs %v: %v\n%s", tc.args, err, out.String())
			}
			t.Logf("%s", out.String())
		})
	}
}
