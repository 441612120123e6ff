-- Headless Neovim end-to-end test of the plugin as most users set it up: installed with vim.pack,
-- require('acp_lsp_bridge').setup({}), no agent named and the bridge found on the PATH. The bridge
-- runs its built-in agent. The user renames `sum` to `acc` where it is declared, goes to the next
-- use of `sum` and enters insert mode there, and ghost text offers the same rename, drawn over
-- `sum`; <Tab> accepts it.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_plugin_test.go): ACP_PLUGIN_REPO, NVIM_TEST_DIR (the workspace),
-- NVIM_TEST_LIB (shipped_lib.lua).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, sleep = T.check, T.sleep

T.install()
require('acp_lsp_bridge').setup({})

T.run(function()
  local buf, shown = T.ghost_after_rename()
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'acp' })[1]
  check(client.config.cmd[1] == 'acp-lsp-bridge' and not vim.tbl_contains(client.config.cmd, '--'),
    'the bridge was not started by its name alone, without an agent: ' .. vim.inspect(client.config.cmd))
  check(vim.fn.maparg('<Tab>', 'i', false, true).buffer == 1, '<Tab> is not mapped in the buffer the bridge attached to')
  if shown then
    T.out('STEP ghost text ok')
    T.accept(buf, 7, '\t\tacc += p', '<Tab>', function() api.nvim_input('<Tab>') end)
  end
  api.nvim_input('<Esc>')
  sleep(50)
end)
