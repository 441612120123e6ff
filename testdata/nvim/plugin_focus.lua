-- Headless Neovim end-to-end test of the plugin's focus and diagnostics notifications, installed
-- with vim.pack and set up with require('acp_lsp_bridge').setup({ agent = <the test agent> }): the
-- buffer-enter focus notification and the diagnostics Neovim shows reach the agent.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_focus_test.go):
--   ACP_PLUGIN_REPO                 the plugin, for vim.pack
--   ACP_TEST_AGENT                  the test agent; the bridge is on the PATH
--   NVIM_TEST_DIR                   the workspace; the agent writes agent.log there
--
-- Steps: open a.go, then b.go (BufEnter), put an error diagnostic on b.go after non-ASCII text,
-- and ask for an inline completion, whose nes/suggest must carry the diagnostic. The Go test reads
-- the agent's log. Output: "DONE" or "FAIL <what>"; exit code 0 only after DONE.

local function out(...)
  io.stdout:write(table.concat(vim.tbl_map(tostring, { ... }), ' '), '\n')
  io.stdout:flush()
end

local function fail(what)
  out('FAIL ' .. what)
  vim.cmd('cquit 1')
end

local dir = os.getenv('NVIM_TEST_DIR')
vim.pack.add({ { src = 'file://' .. os.getenv('ACP_PLUGIN_REPO'), name = 'acp-lsp-bridge' } }, { confirm = false })
require('acp_lsp_bridge').setup({
  agent = {
    os.getenv('ACP_TEST_AGENT'), '--encoding', 'utf-16', '--focus',
    '--context', '{"diagnostics":{},"openFiles":{}}',
    '--log', dir .. '/agent.log',
  },
})

local function agent_log_has(pattern)
  local f = io.open(dir .. '/agent.log')
  if not f then
    return false
  end
  local s = f:read('*a')
  f:close()
  return s:find(pattern, 1, true) ~= nil
end

vim.fn.writefile({ 'package a', 'func A() {}' }, dir .. '/a.go')
vim.fn.writefile({ 'package b', 'var s = "日本"; y' }, dir .. '/b.go')

vim.cmd('edit ' .. vim.fn.fnameescape(dir .. '/a.go'))
if not vim.wait(10000, function() return #vim.lsp.get_clients({ bufnr = 0, name = 'acp' }) > 0 end, 20) then
  fail('the acp client never attached to a.go')
end
if not vim.wait(10000, function() return agent_log_has('"method":"document/didFocus"') and agent_log_has('/a.go"') end, 20) then
  fail('no document/didFocus for a.go reached the agent')
end

vim.cmd('edit ' .. vim.fn.fnameescape(dir .. '/b.go'))
if not vim.wait(10000, function() return #vim.lsp.get_clients({ bufnr = 0, name = 'acp' }) > 0 end, 20) then
  fail('the acp client never attached to b.go')
end
if not vim.wait(10000, function()
  local f = io.open(dir .. '/agent.log')
  if not f then return false end
  local n = 0
  for line in f:lines() do
    if line:find('"method":"document/didFocus"', 1, true) and line:find('/b.go"', 1, true) then
      n = n + 1
    end
  end
  f:close()
  return n > 0
end, 20) then
  fail('no document/didFocus for b.go reached the agent')
end

-- An error on the "y" after 日本: byte column 18 in Neovim, UTF-16 column 14 for the agent.
local line = vim.api.nvim_buf_get_lines(0, 1, 2, false)[1]
local col = line:find('y', 1, true) - 1
local ns = vim.api.nvim_create_namespace('focus-test')
vim.diagnostic.set(ns, 0, { { lnum = 1, col = col, end_col = col + 1, severity = vim.diagnostic.severity.ERROR, message = 'undefined: y' } })

local client = vim.lsp.get_clients({ bufnr = 0, name = 'acp' })[1]
vim.api.nvim_win_set_cursor(0, { 2, col })
local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
params.context = { triggerKind = 1 }
local res = client:request_sync('textDocument/inlineCompletion', params, 10000, 0)
if not res or res.err then
  fail('inlineCompletion: ' .. vim.inspect(res))
end
if not vim.wait(5000, function() return agent_log_has('"method":"nes/suggest"') end, 20) then
  fail('no nes/suggest reached the agent')
end
out('DONE')
vim.cmd('qa!')
