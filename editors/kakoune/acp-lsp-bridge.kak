# acp-lsp-bridge for Kakoune, through kakoune-lsp (kak-lsp): Next Edit Suggestions as code
# actions and completion items. See editors/kakoune/README.md.
#
# In your kakrc, source this file AFTER kakoune-lsp is enabled:
#
#   eval %sh{kak-lsp}
#   lsp-enable
#   source ~/path/to/acp-lsp-bridge.kak
#
# Written for kakoune-lsp's `lsp_servers` option (kakoune-lsp 18 and later; checked against
# v21.0.2). Older versions read servers from kak-lsp.toml instead; see the README.

# The server, as a table of kakoune-lsp's `lsp_servers` TOML. It is kept in its own option so
# that the hook below can append it to whatever servers a buffer already has. The value must
# start with a newline: it is appended to the end of the buffer's table.
declare-option -docstring 'kakoune-lsp server entry for acp-lsp-bridge' str acp_lsp_bridge_server %{
[acp-lsp-bridge]
command = "acp-lsp-bridge"
args = ["--log-file", "/tmp/acp-lsp-bridge.log"]
root_globs = [".git", ".hg", ".jj"]
# kakoune-lsp sends settings.<settings_section> as the initializationOptions.
settings_section = "acp"
[acp-lsp-bridge.settings.acp]
# The ACP agent the bridge starts ({command, args, env}). This is the bridge's built-in agent,
# also used when none is configured. With a model server (see docs/model-agent.md):
#   agent = { command = "acp-lsp-bridge", args = ["agent", "--model-url", "http://127.0.0.1:11434", "--model", "qwen2.5-coder:7b"] }
# Another ACP agent that offers Next Edit Suggestions:
#   agent = { command = "my-nes-agent", args = ["--acp"], env = { MY_AGENT_KEY = "..." } }
# GitHub Copilot's language server (npm install -g @github/copilot-language-server), which offers
# GitHub's next edit suggestions; sign in first with `acp-lsp-bridge sign-in copilot` (README):
#   agent = { command = "copilot-language-server", args = ["--acp"], env = { GITHUB_COPILOT_ACP_USE_CLI = "0" } }
# A coding agent without NES (Codex, Claude, Gemini), asked through prompts: seconds and tokens
# per suggestion, so only when you ask (README, "Using Claude, Codex or Gemini"):
#   agent = { command = "codex-acp", env = { CODEX_API_KEY = "..." } }
#   agent = { command = "gemini", args = ["--acp"], env = { GEMINI_API_KEY = "..." } }
agent = { command = "acp-lsp-bridge", args = ["agent"] }
# completion = false   # code actions only, no completion items
# Files the agent never sees, besides the defaults (.env, keys, .ssh/**, ...; docs/security.md):
# exclude = ["secrets/**", "*.local"]
# Ask while you type only once the buffer has been still 250 ms (a local model); false: start with
# the asking while you type off (acp-toggle turns it on):
# delay = 250
# automatic = false
}

# Attach the bridge to every buffer with a filetype, next to the servers kakoune-lsp (or your
# own hooks) chose for it. Hooks run in the order they were defined, so this one runs after
# kakoune-lsp's, which `lsp-enable` defined. To limit it, replace `.+` with the filetypes you
# want, for example filetype=(?:go|rust|python|typescript).
hook -group acp-lsp-bridge global BufSetOption filetype=.+ %{
    evaluate-commands %sh{
        # Once per buffer: a second table of the same name would not parse.
        case "$kak_opt_lsp_servers" in
            *'[acp-lsp-bridge]'*) ;;
            *) echo 'set-option -add buffer lsp_servers %opt{acp_lsp_bridge_server}' ;;
        esac
    }
}

# Commands of the bridge (workspace/executeCommand). '[]' means no arguments.
define-command acp-reject -docstring 'acp-lsp-bridge: dismiss every suggestion' %{
    lsp-execute-command acp-lsp-bridge.reject '[]'
}
define-command acp-restart -docstring 'acp-lsp-bridge: restart the agent' %{
    lsp-execute-command acp-lsp-bridge.restart '[]'
}
define-command acp-toggle -docstring 'acp-lsp-bridge: suggestions while typing off or on, for every buffer' %{
    lsp-execute-command acp-lsp-bridge.toggle '[]'
}
define-command acp-sign-in -docstring 'acp-lsp-bridge: ask again how to sign in to the agent' %{
    lsp-execute-command acp-lsp-bridge.signIn '[]'
}

# Keys, in the `lsp` user mode that kakoune-lsp defines (`a` there is lsp-code-actions).
map global lsp N ': acp-reject<ret>' -docstring 'acp-lsp-bridge: dismiss suggestions'
map global lsp T ': acp-toggle<ret>' -docstring 'acp-lsp-bridge: suggestions while typing off or on'
