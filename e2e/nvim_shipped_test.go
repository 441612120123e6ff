package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNeovimShippedConfig loads the shipped editors/neovim/acp.lua itself in Neovim 0.12, as a
// user would (vim.g.acp_agent naming the scripted test agent), and drives it with keys: ghost text
// appears while typing, <Tab> accepts it (buffer and nes/accept checked), <C-]> dismisses another
// (buffer unchanged, nes/reject "rejected"), and the statusline function shows the request in
// flight. The steps are in testdata/nvim/shipped.lua.
func TestNeovimShippedConfig(t *testing.T) {
	out, _ := runShippedNeovim(t, "shipped.lua", "ALL PASSED")
	for _, step := range []string{"STEP accept ok", "STEP dismiss ok"} {
		if !strings.Contains(out, step) {
			t.Errorf("missing %q in\n%s", step, out)
		}
	}
}

// TestNeovimShippedConfigBuiltinAgent loads the shipped editors/neovim/acp.lua as a user copies
// it, naming no agent (vim.g.acp_agent unset): the bridge then runs its built-in agent, and after
// the user renames an identifier where it is declared and goes to the next line that uses it, ghost
// text offers the same rename there, which <Tab> accepts (testdata/nvim/builtin.lua).
func TestNeovimShippedConfigBuiltinAgent(t *testing.T) {
	out, _ := runShippedNeovim(t, "builtin.lua", "ALL PASSED")
	if !strings.Contains(out, "STEP accept ok") {
		t.Errorf("missing %q in\n%s", "STEP accept ok", out)
	}
}

// runShippedNeovim runs testdata/nvim/SCRIPT in Neovim 0.12 headless with the shipped
// editors/neovim/acp.lua at hand (ACP_CONFIG), the built bridge and test agent, and a workspace
// folder (NVIM_TEST_DIR) that it returns; the script must print done. env is added to (and
// overrides) that environment.
func runShippedNeovim(t *testing.T, script, done string, env ...string) (out, work string) {
	t.Helper()
	nvim := os.Getenv("NVIM")
	if nvim == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	root := moduleRoot(t)
	bridge, agent := binaries(t)
	dir := t.TempDir()
	work, xdg := filepath.Join(dir, "work"), filepath.Join(dir, "xdg")
	for _, d := range []string{work, xdg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-c", "lua dofile(vim.env.NVIM_TEST_SCRIPT)")
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"NVIM_TEST_SCRIPT="+filepath.Join(root, "testdata", "nvim", script),
		"NVIM_TEST_LIB="+filepath.Join(root, "testdata", "nvim", "shipped_lib.lua"),
		"ACP_CONFIG="+filepath.Join(root, "editors", "neovim", "acp.lua"),
		"ACP_LSP_BRIDGE="+bridge,
		"ACP_TEST_AGENT="+agent,
		"NVIM_TEST_DIR="+work,
		"XDG_CONFIG_HOME="+filepath.Join(xdg, "config"),
		"XDG_DATA_HOME="+filepath.Join(xdg, "data"),
		"XDG_STATE_HOME="+filepath.Join(xdg, "state"),
		"XDG_CACHE_HOME="+filepath.Join(xdg, "cache"),
	)
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), done) {
		log, _ := os.ReadFile(filepath.Join(xdg, "state", "nvim", "acp-lsp-bridge.log"))
		t.Fatalf("neovim: %v\n%s\nbridge log:\n%s", err, b, log)
	}
	return string(b), work
}
