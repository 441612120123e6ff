-- Headless Neovim end-to-end test of sidekick.nvim, its own unchanged code, configured exactly as
-- editors/neovim/sidekick.md says: the guide's Lua blocks are read from the guide and run, with only
-- the bridge's path changed (ACP_LSP_BRIDGE, a wrapper that adds --trace). As copied the guide runs
-- the bridge's built-in agent. The user renames `sum` to `acc` where it is declared (a line with
-- non-ASCII text before and after the name); sidekick draws the next use's rename; <Tab> jumps to
-- it, <Tab> applies it (nes/accept, by sidekick's own exec_cmd) and leaves the cursor just after
-- the applied text; the next suggestion is dismissed with the guide's <leader>nd (nes/reject, hidden,
-- and a further <Tab> applies nothing); a suggestion the user types over is dropped and ends once.
--
--   nvim --headless --clean -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_plugins_test.go): NVIM_PLUGINS, ACP_GUIDE, ACP_LSP_BRIDGE,
-- ACP_TRACE (the bridge's --trace file), NVIM_TEST_DIR, NVIM_TEST_LIB (shipped_lib.lua).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep = T.check, T.wait_for, T.sleep

-- As a plugin manager installs it: on the runtimepath.
vim.opt.rtp:prepend(os.getenv('NVIM_PLUGINS') .. '/sidekick.nvim')
vim.g.mapleader = ' '

T.guide(2)

local line = T.line
local Nes = require('sidekick.nes')
local ns = require('sidekick.config').ns

-- The edit sidekick holds for buf, if any: its line (1-based) and its id.
local function shown(buf)
  local e = Nes.get(buf)[1]
  return e and (e.range.start.line + 1), e and e.command and e.command.arguments[1]
end

local function drawn(buf)
  return #api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}) > 0
end

T.run(function()
  -- Rename sum to acc where it is declared: the plugin draws the rename of the next use.
  local buf = T.rename_sum('copilot_acp')
  check(wait_for(function() return shown(buf) == 7 end, 10000), 'no edit on line 7: ' .. vim.inspect(Nes.get(buf)))
  check(wait_for(function() return drawn(buf) end, 3000), 'sidekick drew nothing')
  local _, first = shown(buf)
  T.out('STEP drawn ok')

  -- Tab jumps; Tab applies, runs the edit's command, and leaves the cursor after the edit.
  T.tab_tab(buf)
  -- The cursor: just after the applied text (a byte column), where the user goes on typing.
  local after = line(buf, 7):find('acc', 1, true) + 2
  check(wait_for(function() local c = api.nvim_win_get_cursor(0) return c[1] == 7 and c[2] == after end, 3000),
    'the cursor after applying is at ' .. vim.inspect(api.nvim_win_get_cursor(0)) .. ', want {7, ' .. after .. '}, just after the edit')
  T.out('STEP accept ok')

  -- The next use, on line 9: dismissed with the guide's mapping.
  check(wait_for(function() return shown(buf) == 9 end, 10000), 'no edit on line 9: ' .. vim.inspect(Nes.get(buf)))
  local _, second = shown(buf)
  api.nvim_input(' nd')
  check(wait_for(function() return shown(buf) == nil and not drawn(buf) end, 3000), 'the dismissed edit is still shown')
  check(wait_for(function() return #T.ends() >= 2 end, 3000), 'the agent heard nothing after the dismiss')
  api.nvim_input('<Tab>')
  sleep(400)
  check(line(buf, 9) == '\treturn sum', 'a <Tab> after the dismiss applied it: line 9 reads ' .. vim.inspect(line(buf, 9)))
  T.out('STEP dismiss ok')

  -- Typed over: a change that does not follow the shown edit drops it (sidekick checks the
  -- version) and the bridge ends it once, as ignored.
  api.nvim_win_set_cursor(0, { 9, 8 })
  api.nvim_input('ciwtotal<Esc>')
  sleep(300)
  api.nvim_win_set_cursor(0, { 5, 1 })
  api.nvim_input('cwsum<Esc>') -- back to sum: the next use (line 7) is suggested again
  check(wait_for(function() return shown(buf) == 7 end, 10000), 'no edit on line 7 after renaming back: ' .. vim.inspect(Nes.get(buf)))
  local _, third = shown(buf)
  api.nvim_win_set_cursor(0, { 3, 0 })
  api.nvim_input('A!<Esc>') -- the user types on elsewhere
  check(wait_for(function() return shown(buf) ~= 7 or select(2, shown(buf)) ~= third end, 3000), 'the edit typed over is still shown')
  check(line(buf, 7) == '\t\t/*é*/ acc += p // 😀', 'line 7 changed: ' .. vim.inspect(line(buf, 7)))
  T.out('STEP typed over ok')

  sleep(500)
  T.check_ends({ [first] = 'nes/accept', [second] = 'nes/reject rejected', [third] = 'nes/reject ignored' })
  T.out('STEP ends ok')
end)
