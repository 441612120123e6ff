-- acp-lsp-bridge for Neovim 0.11+ (ghost text needs 0.12's vim.lsp.inline_completion).
-- Copy into your config (for example ~/.config/nvim/plugin/acp.lua). As it is, it runs the bridge's
-- built-in agent (rename propagation and repeated edits, no model); set vim.g.acp_agent for another.
--
-- Keys (insert mode unless noted):
--   <Tab>       accept the ghost text (acp-lsp-bridge.accept runs with it: the agent hears nes/accept)
--   <C-]>       dismiss: hide it and tell the agent (acp-lsp-bridge.reject, nes/reject "rejected")
--   <M-CR>      ask the agent now (acp-lsp-bridge.suggest, triggerKind "manual"); also in normal mode
--   <leader>na  normal mode: code actions, where every kind of suggestion is offered (edits of other
--               files, jumps, renames, search-and-replace)
--
-- It also tells the bridge which file you enter, where the cursor is and which lines you see
-- (acp-lsp-bridge/didFocus → the agent's document/didFocus), and which diagnostics Neovim shows
-- for a file, from every language server (acp-lsp-bridge/diagnostics → nes/suggest context).
--
-- Set vim.g.acp_agent (a list: the agent command and its args, e.g. { 'my-nes-agent', '--acp' }; unset:
-- the built-in agent) and, when acp-lsp-bridge is not on your PATH, vim.g.acp_lsp_bridge before this
-- file runs, or edit the two lines below.
--
-- Statusline: AcpLspBridgeStatus() returns "⋯ next edit" while the agent is asked for this buffer,
-- "" otherwise, e.g.  vim.o.statusline = '%f %m%=%{v:lua.AcpLspBridgeStatus()} %l:%c'
--
-- With nvim-lspconfig instead of vim.lsp.config (Neovim 0.10):
--   local configs = require('lspconfig.configs')
--   configs.acp = configs.acp or { default_config = {
--     cmd = { 'acp-lsp-bridge' }, filetypes = {}, root_dir = require('lspconfig.util').root_pattern('.git'),
--     single_file_support = true } }
--   require('lspconfig').acp.setup({})

local agent = vim.g.acp_agent -- the ACP agent that offers Next Edit Suggestions, and its args; nil: built-in
-- The bridge on the PATH, or its path; on Windows with its .exe:
--   vim.g.acp_lsp_bridge = [[C:\Users\you\go\bin\acp-lsp-bridge.exe]]
local bridge = vim.g.acp_lsp_bridge or 'acp-lsp-bridge'

local cmd = { bridge, '--log-file', vim.fn.stdpath('log') .. '/acp-lsp-bridge.log' }
if agent and #agent > 0 then
  table.insert(cmd, '--')
  vim.list_extend(cmd, vim.deepcopy(agent))
end

vim.lsp.config('acp', {
  cmd = cmd,
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

local group = vim.api.nvim_create_augroup('acp-lsp-bridge', { clear = true })

-- Focus: the file, the cursor and the visible lines, when you enter a buffer.
local function send_focus(buf)
  local client = acp_client(buf)
  local win = vim.api.nvim_get_current_win()
  if not client or vim.api.nvim_win_get_buf(win) ~= buf then
    return
  end
  local top, bottom = vim.fn.line('w0', win) - 1, vim.fn.line('w$', win) - 1
  client:notify('acp-lsp-bridge/didFocus', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = vim.lsp.util.make_position_params(win, client.offset_encoding).position,
    visibleRange = { start = { line = top, character = 0 }, ['end'] = { line = bottom, character = 0 } },
  })
end

vim.api.nvim_create_autocmd('BufEnter', {
  group = group,
  callback = function(ev) send_focus(ev.buf) end,
})
vim.api.nvim_create_autocmd('LspAttach', {
  group = group,
  callback = function(ev)
    local client = vim.lsp.get_client_by_id(ev.data.client_id)
    if client and client.name == 'acp' then
      send_focus(ev.buf)
    end
  end,
})

-- Diagnostics: what Neovim shows for the buffer, in the position encoding the bridge negotiated
-- (vim.diagnostic columns are bytes).
vim.api.nvim_create_autocmd('DiagnosticChanged', {
  group = group,
  callback = function(ev)
    local buf = ev.buf
    local client = acp_client(buf)
    if not client or not vim.api.nvim_buf_is_loaded(buf) then
      return
    end
    local enc = client.offset_encoding
    local function col(lnum, c)
      if enc == 'utf-8' then
        return c
      end
      local line = vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1] or ''
      return vim.str_utfindex(line, enc, math.min(c, #line), false)
    end
    local out = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      local end_lnum, end_col = d.end_lnum or d.lnum, d.end_col or d.col
      out[#out + 1] = {
        range = {
          start = { line = d.lnum, character = col(d.lnum, d.col) },
          ['end'] = { line = end_lnum, character = col(end_lnum, end_col) },
        },
        severity = d.severity,
        message = d.message,
      }
    end
    client:notify('acp-lsp-bridge/diagnostics', { textDocument = { uri = vim.uri_from_bufnr(buf) }, diagnostics = out })
  end,
})

-- Statusline hint: requests to the bridge in flight, per buffer.
local pending = {}
vim.api.nvim_create_autocmd('LspRequest', {
  group = group,
  callback = function(ev)
    local client = vim.lsp.get_client_by_id(ev.data.client_id)
    local req = ev.data.request
    if not client or client.name ~= 'acp' or not req then
      return
    end
    local m = req.method
    if m ~= 'textDocument/inlineCompletion' and m ~= 'textDocument/codeAction' and m ~= 'workspace/executeCommand' then
      return
    end
    local buf = ev.buf or req.bufnr or 0
    pending[buf] = pending[buf] or {}
    pending[buf][ev.data.request_id] = req.type == 'pending' or nil
    vim.cmd('redrawstatus')
  end,
})

function _G.AcpLspBridgeStatus()
  local reqs = pending[vim.api.nvim_get_current_buf()]
  if reqs and next(reqs) ~= nil then
    return '⋯ next edit'
  end
  return ''
end
