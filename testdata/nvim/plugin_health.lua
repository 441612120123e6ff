-- Headless Neovim end-to-end test of :checkhealth acp_lsp_bridge, the plugin installed with
-- vim.pack and the bridge found on the PATH. The Go test (e2e/nvim_plugin_test.go) reads the
-- reports, written as the health buffer shows them:
--   health-ok.txt       setup({}), a Go file open: the binary, its version, the built-in agent's
--                       verdict from doctor, the encoding negotiated for the file
--   health-bridge.txt   setup({ bridge = <a path where nothing is> })
--   health-agent.txt    setup({ agent = { 'acp-no-such-agent', '--acp' } })
--   health-copilot.txt  setup({ agent = 'copilot' }) (acp-lsp-bridge --agent copilot), with only
--                       the bridge's folder on the PATH, so no copilot-language-server
--   health-server.txt   setup({ agent = the model agent at HEALTH_DOWN_URL }), where nothing listens
--   health-none.txt     vim.lsp.enable('acp', false): not enabled, from a buffer without a client
-- It prints "ENCODING <client.offset_encoding>" for the Go test to compare.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment: ACP_PLUGIN_REPO, NVIM_TEST_DIR (the workspace), NVIM_TEST_LIB (shipped_lib.lua),
-- HEALTH_DOWN_URL (an address where nothing listens).
-- Output: "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))

T.install()
local acp = require('acp_lsp_bridge')

-- report runs :checkhealth acp_lsp_bridge from the current buffer and writes what it shows to
-- NVIM_TEST_DIR/name, then closes it.
local function report(name)
  vim.cmd('checkhealth acp_lsp_bridge')
  vim.fn.writefile(api.nvim_buf_get_lines(0, 0, -1, false), T.dir .. '/' .. name)
  vim.cmd('bwipe')
end

T.run(function()
  acp.setup({})
  local buf = T.edit(T.dir .. '/main.go', 'package main\n\nfunc main() {\n}\n')
  T.out('ENCODING ' .. vim.lsp.get_clients({ bufnr = buf, name = 'acp' })[1].offset_encoding)
  report('health-ok.txt')

  acp.setup({ bridge = T.dir .. '/nowhere/acp-lsp-bridge' })
  report('health-bridge.txt')

  acp.setup({ agent = { 'acp-no-such-agent', '--acp' } })
  report('health-agent.txt')

  -- The short name: the bridge knows the command (copilot-language-server --acp) and looks for it
  -- on the PATH it inherits, here the bridge's folder alone, whatever this machine has installed.
  acp.setup({ agent = 'copilot' })
  local path = vim.env.PATH
  vim.env.PATH = vim.fn.fnamemodify(vim.fn.exepath('acp-lsp-bridge'), ':h')
  report('health-copilot.txt')
  vim.env.PATH = path

  acp.setup({ agent = { 'acp-lsp-bridge', 'agent', '--model-url', os.getenv('HEALTH_DOWN_URL'), '--model', 'qwen2.5-coder:7b' } })
  report('health-server.txt')

  vim.lsp.enable('acp', false)
  vim.cmd('enew')
  report('health-none.txt')
end)
