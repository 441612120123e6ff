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
	runPluginGuide(t, "copilot-lsp.md", "copilot_lsp.lua", "drawn", "jump", "accept", "dismiss", "ends")
}

// TestSidekickPlugin runs sidekick.nvim's own code in Neovim 0.12, configured with the Lua of
// editors/neovim/sidekick.md as written there (the bridge's path aside), against the built-in
// agent: drawn, jumped to and applied with the guide's <Tab> (nes/accept by sidekick's own
// exec_cmd, the cursor at the end of the edit's line), dismissed with its <leader>nd (nes/reject
// rejected), dropped when the user types on (ignored), each id ended once; non-ASCII text before
// and after the edit (testdata/nvim/sidekick.lua).
func TestSidekickPlugin(t *testing.T) {
	runPluginGuide(t, "sidekick.md", "sidekick.lua", "drawn", "jump", "accept", "dismiss", "typed over", "ends")
}

// runPluginGuide runs testdata/nvim/SCRIPT, which configures a plugin from $NVIM_PLUGINS with the
// Lua of editors/neovim/GUIDE, the bridge's path changed to a wrapper that adds --trace, and
// checks that each step printed "STEP <step> ok".
func runPluginGuide(t *testing.T, guide, script string, steps ...string) {
	t.Helper()
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
	out, _ := runShippedNeovim(t, script, "ALL PASSED",
		"NVIM_PLUGINS="+plugins,
		"ACP_GUIDE="+filepath.Join(moduleRoot(t), "editors", "neovim", guide),
		"ACP_LSP_BRIDGE="+wrapper,
		"ACP_TRACE="+trace,
	)
	for _, step := range steps {
		if !strings.Contains(out, "STEP "+step+" ok") {
			t.Errorf("missing %q in\n%s", "STEP "+step+" ok", out)
		}
	}
}
