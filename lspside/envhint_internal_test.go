package lspside

import (
	"strings"
	"testing"
)

// TestEnvHintPerEditor: an env_var sign-in says where this editor sets the variable.
func TestEnvHintPerEditor(t *testing.T) {
	for client, want := range map[string]string{
		"Neovim":             "vim.lsp.config('acp', { cmd_env = { OPENAI_API_KEY = '…' } })",
		"Visual Studio Code": "export OPENAI_API_KEY in the shell you start VS Code from",
		"helix":              "environment = { OPENAI_API_KEY = \"…\" } under [language-server.acp-lsp-bridge] in languages.toml",
		"Eglot":              "(setenv \"OPENAI_API_KEY\" \"…\")",
		"Zed":                "under lsp.acp-lsp-bridge.binary in settings.json",
		"Sublime Text LSP":   "LSP.sublime-settings",
		"kakoune-lsp":        "initializationOptions.agent.env ({\"OPENAI_API_KEY\": \"…\"})",
	} {
		if got := envHint(client, []string{"OPENAI_API_KEY"}); !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", client, got, want)
		}
	}
}
