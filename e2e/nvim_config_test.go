package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNeovimConfigLoads: the shipped editors/neovim/acp.lua loads in Neovim 0.12 and binds accept,
// dismiss (acp-lsp-bridge.reject) and the manual trigger (acp-lsp-bridge.suggest).
func TestNeovimConfigLoads(t *testing.T) {
	nvim := os.Getenv("NVIM")
	if nvim == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	config := filepath.Join(moduleRoot(t), "editors", "neovim", "acp.lua")
	check := `lua local ok = vim.lsp.config.acp.cmd[1] == 'acp-lsp-bridge'
		for _, m in ipairs({ {'i', '<Tab>'}, {'i', '<C-]>'}, {'i', '<M-CR>'}, {'n', '<M-CR>'}, {'n', '<leader>na'} }) do
			ok = ok and vim.fn.maparg(m[2], m[1], false, true).desc ~= nil
		end
		io.stdout:write(ok and 'CONFIG OK\n' or 'CONFIG BAD\n')`
	cmd := exec.Command(nvim, "--headless", "--clean", "-c", "luafile "+config, "-c", strings.ReplaceAll(check, "\n", " "), "-c", "qa!")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CONFIG OK") {
		t.Fatalf("loading %s: %v\n%s", config, err, out)
	}
	src, _ := os.ReadFile(config)
	for _, cmdName := range []string{"acp-lsp-bridge.reject", "acp-lsp-bridge.suggest"} {
		if !strings.Contains(string(src), cmdName) {
			t.Errorf("%s does not bind %s", config, cmdName)
		}
	}
}
