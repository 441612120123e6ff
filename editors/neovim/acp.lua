-- acp-lsp-bridge for Neovim 0.11+ (ghost text needs 0.12's vim.lsp.inline_completion).
-- Copy into your config (for example ~/.config/nvim/plugin/acp.lua) and set the agent command.
--
-- Keys (insert mode unless noted):
--   <Tab>       accept the ghost text (acp-lsp-bridge.accept runs with it: the agent hears nes/accept)
--   <C-]>       dismiss: hide it and tell the agent (acp-lsp-bridge.reject, nes/reject "rejected")
--   <M-CR>      ask the agent now (acp-lsp-bridge.suggest, triggerKind "manual"); also in normal mode
--   <leader>na  normal mode: code actions, where every kind of suggestion is offered (edits of other
--               files, jumps, renames, search-and-replace)

local agent = { 'my-nes-agent' } -- the ACP agent that offers Next Edit Suggestions, and its args

vim.lsp.config('acp', {
  cmd = vim.list_extend({ 'acp-lsp-bridge', '--log-file', vim.fn.stdpath('log') .. '/acp-lsp-bridge.log', '--' }, agent),
  root_markers = { '.git' },
  -- filetypes = { 'go', 'lua', 'python' }, -- leave out to attach to every file
})
vim.lsp.enable('acp')

if vim.lsp.inline_completion then
  vim.lsp.inline_completion.enable()
end

local function acp_client(buf)
  return vim.lsp.get_clients({ bufnr = buf, name = 'acp' })[1]
end

local function run(buf, command, arguments)
  local client = acp_client(buf)
  if client then
    client:exec_cmd({ title = command, command = command, arguments = arguments }, { bufnr = buf })
  end
end

vim.keymap.set('i', '<Tab>', function()
  if vim.lsp.inline_completion and vim.lsp.inline_completion.get() then
    return
  end
  return '<Tab>'
end, { expr = true, desc = 'Next edit: accept' })

vim.keymap.set('i', '<C-]>', function()
  local buf = vim.api.nvim_get_current_buf()
  -- Leaving and re-entering insert mode clears Neovim's ghost text; the bridge ends the
  -- suggestions of this file as rejected.
  run(buf, 'acp-lsp-bridge.reject', { { uri = vim.uri_from_bufnr(buf) } })
  vim.cmd('stopinsert')
  vim.schedule(function() vim.cmd('startinsert') end)
end, { desc = 'Next edit: dismiss' })

vim.keymap.set({ 'i', 'n' }, '<M-CR>', function()
  local buf = vim.api.nvim_get_current_buf()
  local client = acp_client(buf)
  if not client then
    return
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  run(buf, 'acp-lsp-bridge.suggest', { { uri = params.textDocument.uri, position = params.position } })
end, { desc = 'Next edit: ask now' })

vim.keymap.set('n', '<leader>na', vim.lsp.buf.code_action, { desc = 'Next edit: code actions' })
