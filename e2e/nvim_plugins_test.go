package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopilotLspPlugin runs copilot-lsp.nvim's own code in Neovim 0.12, configured with the Lua of
// editors/neovim/copilot-lsp.md as written there (the bridge's path aside), against the bridge's
// built-in agent: the plugin draws the suggested rename, the guide's <Tab> jumps to it and applies
// it, its <Esc> after a jump hides the next one and tells the agent, and a further <Tab> applies
// nothing; the agent hears nes/accept and nes/reject once each (testdata/nvim/copilot_lsp.lua).
func TestCopilotLspPlugin(t *testing.T) {
	plugins := os.Getenv("NVIM_PLUGINS")
	if plugins == "" {
		skipWithoutPeer(t, `NVIM_PLUGINS is not set (eval "$(PEERS_NVIM_PLUGINS=1 ../shared/tools/install-test-peers.sh)")`)
	}
	bridge, _ := binaries(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	// The guide's command with only the bridge's path changed: to a wrapper that records the
	// agent's side of the session.
	wrapper := filepath.Join(dir, "acp-lsp-bridge")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec '"+bridge+"' --trace '"+trace+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _ := runShippedNeovim(t, "copilot_lsp.lua", "ALL PASSED",
		"NVIM_PLUGINS="+plugins,
		"ACP_GUIDE="+filepath.Join(moduleRoot(t), "editors", "neovim", "copilot-lsp.md"),
		"ACP_LSP_BRIDGE="+wrapper,
		"ACP_TRACE="+trace,
	)
	for _, step := range []string{"STEP drawn ok", "STEP jump ok", "STEP accept ok", "STEP dismiss ok", "STEP ends ok"} {
		if !strings.Contains(out, step) {
			t.Errorf("missing %q in\n%s", step, out)
		}
	}
}
