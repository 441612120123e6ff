---@brief
---
--- https://github.com/acp-lsp-bridge/acp-lsp-bridge
---
--- acp-lsp-bridge is a language server that gives Next Edit Suggestions from an
--- Agent Client Protocol (ACP) agent: ghost text on the cursor's line (Neovim 0.12's
--- `vim.lsp.inline_completion`, enabled for the buffers it attaches to) and code actions for edits
--- anywhere, jumps, renames and search-and-replace.
---
--- Install the binary from a release archive, or with Go:
--- ```sh
--- go install github.com/acp-lsp-bridge/acp-lsp-bridge/cmd/acp-lsp-bridge@latest
--- ```
---
--- As configured here it runs the bridge's built-in agent (after you rename an identifier or repeat
--- an edit, it suggests the same at the next places; no model, no network). To use another agent
--- that offers NES, name it after `--`:
--- ```lua
--- vim.lsp.config('acp', { cmd = { 'acp-lsp-bridge', '--', 'my-nes-agent', '--its-flags' } })
--- ```
---
--- It attaches to every file type and turns ghost text on in those buffers (to keep it off, give
--- the config an `on_attach` of your own). Accept the ghost text with
--- `vim.lsp.inline_completion.get()`, for example from a key in insert mode. The acp-lsp-bridge
--- plugin (`require('acp_lsp_bridge').setup({})`) adds keys, focus and diagnostics notifications,
--- and `:checkhealth acp_lsp_bridge`.

---@type vim.lsp.Config
return {
  -- A log file of its own: the bridge logs to stderr otherwise, which Neovim writes to its LSP log
  -- as errors.
  cmd = { 'acp-lsp-bridge', '--log-file', vim.fn.stdpath('log') .. '/acp-lsp-bridge.log' },
  -- No filetypes: suggestions are useful in any file the agent can read.
  root_markers = { '.git' },
  -- The bridge's state (starting, ready, asking, off, ...), for require('acp_lsp_bridge').status()
  -- and :checkhealth acp_lsp_bridge.
  handlers = {
    ['acp-lsp-bridge/status'] = function(...) return require('acp_lsp_bridge.state').handler(...) end,
    -- A suggestion the bridge asked for ahead is ready: the ghost text is asked for at once rather
    -- than after Neovim's own wait.
    ['acp-lsp-bridge/suggestionReady'] = function(...) return require('acp_lsp_bridge').suggestion_ready(...) end,
  },
  init_options = { suggestionReady = true, asksItself = true },
  -- Each change at once: Neovim otherwise holds a buffer's changes back for 150 ms after each key
  -- (until a request flushes them), and the bridge, which asks the agent once the buffer has been
  -- still after the last key (--ask-ahead), would learn of that key 150 ms late. Neovim shares this
  -- with the other servers of the buffer that sync the same way; it is what VS Code does for all.
  flags = { debounce_text_changes = 0 },
  on_attach = function(client, bufnr)
    -- The plugin's quieter display (display = 'mark') asks for its mark itself.
    local function mark()
      local acp = package.loaded['acp_lsp_bridge']
      return acp and acp.options and acp.options.display == 'mark'
    end
    -- Ghost text is what the bridge is for, and Neovim leaves inline completion off in every buffer
    -- until asked; turning it on for this buffer only leaves other servers' buffers as they were.
    -- Neovim 0.11 has no inline completion: there the code actions remain. Not under the quieter
    -- display, which turned it off (its LspAttach runs before this): Neovim's request would
    -- supersede the mark's at the bridge.
    if vim.lsp.inline_completion and not mark() then
      vim.lsp.inline_completion.enable(true, { bufnr = bufnr })
    end
    -- Neovim asks for ghost text in insert mode only: outside it (an undo, a `dd`), the bridge
    -- need not ask the agent ahead of a request that will not come (acp-lsp-bridge/asking). The
    -- plugin's quieter display asks after those changes too.
    local function asking(automatic)
      if mark() then
        automatic = true
      end
      client:notify('acp-lsp-bridge/asking', { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, automatic = automatic })
    end
    local group = vim.api.nvim_create_augroup('acp_lsp_bridge_asking_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd('InsertEnter', { group = group, buffer = bufnr, callback = function() asking(true) end })
    vim.api.nvim_create_autocmd('InsertLeave', { group = group, buffer = bufnr, callback = function() asking(false) end })
    asking(vim.api.nvim_get_mode().mode:match('^i') ~= nil)
  end,
}
