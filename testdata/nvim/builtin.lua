-- Headless Neovim end-to-end test of the shipped editors/neovim/acp.lua loaded as copied, with no
-- agent named (vim.g.acp_agent unset): the bridge runs its built-in agent. The user renames `sum`
-- to `acc` where it is declared, goes to the next use of `sum` and enters insert mode there, and
-- ghost text offers the same rename, drawn over `sum`; <Tab> accepts it.
--
--   nvim --headless --clean -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_shipped_test.go): ACP_LSP_BRIDGE, ACP_CONFIG (the shipped file),
-- NVIM_TEST_DIR (the workspace), NVIM_TEST_LIB (shipped_lib.lua).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep = T.check, T.wait_for, T.sleep

vim.g.acp_lsp_bridge = os.getenv('ACP_LSP_BRIDGE')
vim.cmd('luafile ' .. vim.fn.fnameescape(os.getenv('ACP_CONFIG')))

local function line(buf, row)
  return api.nvim_buf_get_lines(buf, row - 1, row, false)[1]
end

T.run(function()
  local buf = T.edit(T.dir .. '/total.go', table.concat({
    'package main',
    '',
    '// Total adds the prices, in €.',
    'func Total(prices []int) int {',
    '\tsum := 0',
    '\tfor _, p := range prices {',
    '\t\tsum += p',
    '\t}',
    '\treturn sum',
    '}',
    '',
  }, '\n'))
  -- vim.lsp.inline_completion sets the buffer up in a vim.schedule after LspAttach, and the
  -- built-in agent starts in the background; keys typed before that ask nothing.
  sleep(300)
  check(wait_for(function() return #vim.lsp.get_clients({ bufnr = buf, name = 'acp' }) > 0 end, 10000), 'no acp client')

  -- Rename sum to acc on line 5, then insert at the sum of line 7.
  api.nvim_win_set_cursor(0, { 5, 1 })
  api.nvim_input('cwacc<Esc>')
  check(wait_for(function() return line(buf, 5) == '\tacc := 0' end, 3000), 'line 5 reads ' .. vim.inspect(line(buf, 5)))
  sleep(300)
  api.nvim_input('jj^i')
  local shown = wait_for(function() return T.ghost(buf) == 'acc' end, 10000)
  if check(shown, 'no ghost text "acc" on line 7 after the rename on line 5: ' .. vim.inspect(T.ghost(buf))) then
    T.out('STEP ghost text ok')
    api.nvim_input('<Tab>')
    check(wait_for(function() return line(buf, 7) == '\t\tacc += p' end, 3000),
      'after <Tab> line 7 reads ' .. vim.inspect(line(buf, 7)))
    T.out('STEP accept ok')
  end
  api.nvim_input('<Esc>')
  sleep(50)
end)
