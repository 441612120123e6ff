-- Headless Neovim end-to-end test of the plugin's language server config alone, as an
-- nvim-lspconfig user has it: the plugin installed with vim.pack, vim.lsp.enable('acp') and
-- nothing else (no setup(), no agent named, the bridge found on the PATH). lsp/acp.lua starts the
-- bridge, which runs its built-in agent, and turns ghost text on: after the user renames `sum`
-- where it is declared and enters insert mode at the next `sum`, ghost text offers the same
-- rename, and vim.lsp.inline_completion.get() (what a user maps to a key) accepts it. No key is
-- mapped without setup().
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
vim.lsp.enable('acp')

T.run(function()
  local buf, shown = T.ghost_after_rename()
  -- Neovim maps <Tab> itself (to jump in a snippet); none of the plugin's keys is mapped.
  check((vim.fn.maparg('<Tab>', 'i', false, true).desc or ''):find('^Next edit') == nil, 'without setup() <Tab> is mapped to accept')
  check(package.loaded['acp_lsp_bridge'] == nil, 'without setup() the plugin module was loaded')
  if shown then
    T.out('STEP ghost text ok')
    T.accept(buf, 7, '\t\tacc += p', 'vim.lsp.inline_completion.get()', function()
      check(vim.lsp.inline_completion.get(), 'vim.lsp.inline_completion.get() accepted nothing')
    end)
  end
  api.nvim_input('<Esc>')
  sleep(50)
end)
