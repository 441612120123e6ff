-- Headless Neovim end-to-end test of copilot-lsp.nvim, its own unchanged code, configured exactly
-- as editors/neovim/copilot-lsp.md says: the guide's Lua blocks are read from the guide and run,
-- with only the bridge's path changed (ACP_LSP_BRIDGE, a wrapper that adds --trace). As copied the
-- guide runs the bridge's built-in agent. The user renames `sum` to `acc` where it is declared;
-- the plugin draws the next use's rename; <Tab> jumps to it, <Tab> applies it (nes/accept); the
-- next suggestion is jumped to and dismissed with <Esc> (nes/reject), after which it is hidden and a
-- further <Tab> applies nothing.
--
--   nvim --headless --clean -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_plugins_test.go): NVIM_PLUGINS, ACP_GUIDE, ACP_LSP_BRIDGE,
-- ACP_TRACE (the bridge's --trace file), NVIM_TEST_DIR, NVIM_TEST_LIB (shipped_lib.lua).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep = T.check, T.wait_for, T.sleep

-- As a plugin manager installs it: on the runtimepath, its plugin/ file sourced.
local plugin = os.getenv('NVIM_PLUGINS') .. '/copilot-lsp'
vim.opt.rtp:prepend(plugin)
vim.cmd('runtime! plugin/copilot-lsp.lua')
vim.g.copilot_nes_debounce = 100 -- the plugin's own setting; 500 ms by default

T.guide(2) -- config and keymaps

local line = T.line

local ns = api.nvim_create_namespace('copilotlsp.nes')
local function drawn(buf)
  return #api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}) > 0
end

-- The line (1-based) of the suggestion the plugin holds.
local function shown(buf)
  local s = vim.b[buf].nes_state
  return s and (s.range.start.line + 1)
end

T.run(function()
  -- Rename sum to acc where it is declared: the plugin draws the rename of the next use.
  local buf = T.rename_sum('copilot_ls')
  check(wait_for(function() return shown(buf) == 7 end, 10000), 'no suggestion on line 7: ' .. vim.inspect(vim.b[buf].nes_state))
  check(drawn(buf), 'the plugin drew nothing')
  local first = vim.b[buf].nes_state.command.arguments[1]
  T.out('STEP drawn ok')

  -- Tab jumps to it; Tab again applies it, and the guide's mapping runs its command.
  T.tab_tab(buf)
  check(wait_for(function() return #T.ends() >= 1 end, 3000), 'the agent heard nothing after the accept')
  T.out('STEP accept ok')

  -- The applied edit makes the plugin ask again: the last use, on line 9. Tab jumps there, and
  -- Esc dismisses it: hidden, the agent told, and a further Tab applies nothing.
  check(wait_for(function() return shown(buf) == 9 end, 10000), 'no suggestion on line 9: ' .. vim.inspect(vim.b[buf].nes_state))
  local second = vim.b[buf].nes_state.command.arguments[1]
  api.nvim_input('<Tab>')
  check(wait_for(function() return api.nvim_win_get_cursor(0)[1] == 9 end, 3000), 'the <Tab> did not jump to line 9')
  sleep(100)
  api.nvim_input('<Esc>')
  check(wait_for(function() return vim.b[buf].nes_state == nil and not drawn(buf) end, 3000),
    '<Esc> after the jump left the suggestion: ' .. vim.inspect(vim.b[buf].nes_state))
  check(wait_for(function() return #T.ends() >= 2 end, 3000), 'the agent heard nothing after <Esc>')
  api.nvim_input('<Tab>')
  sleep(400)
  check(line(buf, 9) == '\treturn sum', 'a <Tab> after <Esc> applied the dismissed edit: line 9 reads ' .. vim.inspect(line(buf, 9)))
  T.out('STEP dismiss ok')

  -- Each id ended once (suggestions asked for while typing and never shown end as ignored): the
  -- first shown accepted, the second rejected.
  sleep(300)
  T.check_ends({ [first] = 'nes/accept', [second] = 'nes/reject rejected' })
  T.out('STEP ends ok')
end)
