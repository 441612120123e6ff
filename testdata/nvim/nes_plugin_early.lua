-- Headless Neovim end-to-end test of sidekick.nvim or copilot-lsp.nvim (EARLY_PLUGIN), their own
-- unchanged code configured as editors/neovim/sidekick.md or copilot-lsp.md says (the guide's Lua
-- blocks run, the bridge's path changed to ACP_LSP_BRIDGE: a wrapper that runs the model agent
-- against the fake streaming Zeta 2 server of e2e/nvim_early_test.go), with the model agent's
-- early answer: the user types "(" at the end of line 2 of p.go (EARLY_DOC) and leaves insert
-- mode; the plugin draws the finished line 2 while the fake still holds the rest of its answer;
-- <Tab> applies it; the fake sends the rest (EARLY_RELEASE), and the plugin draws line 15's change
-- without a second request to the fake; <Tab> jumps there, <Tab> applies it. The fake writes what
-- it did to EARLY_STATE.
--
--   nvim --headless --clean -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_early_test.go): NVIM_PLUGINS, ACP_GUIDE, ACP_LSP_BRIDGE,
-- NVIM_TEST_DIR, NVIM_TEST_LIB, EARLY_PLUGIN, EARLY_DOC, EARLY_STATE, EARLY_RELEASE.
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for = T.check, T.wait_for

local sidekick = os.getenv('EARLY_PLUGIN') == 'sidekick'
local client_name = sidekick and 'copilot_acp' or 'copilot_ls'
if sidekick then
  vim.opt.rtp:prepend(os.getenv('NVIM_PLUGINS') .. '/sidekick.nvim')
else
  vim.opt.rtp:prepend(os.getenv('NVIM_PLUGINS') .. '/copilot-lsp')
  vim.cmd('runtime! plugin/copilot-lsp.lua')
  vim.g.copilot_nes_debounce = 100 -- the plugin's own setting; 500 ms by default
end
vim.g.mapleader = ' '
T.guide(2)

local state = T.early_state

-- The line (1-based) of the edit the plugin holds for buf, if any, and what it holds.
local function held_edit(buf)
  if sidekick then
    return require('sidekick.nes').get(buf)[1]
  end
  return vim.b[buf].nes_state
end

local function shown(buf)
  local e = held_edit(buf)
  return e and (e.range.start.line + 1)
end

T.run(function()
  local buf = T.open_file(T.dir .. '/p.go', os.getenv('EARLY_DOC'), client_name)
  T.sleep(500)
  T.type_at_end(2, '(')
  api.nvim_input('<Esc>') -- the plugin asks once the user leaves insert mode
  check(wait_for(function() return T.line(buf, 2) == 'var x = g(' end, 3000), 'line 2 reads ' .. vim.inspect(T.line(buf, 2)))
  if check(wait_for(function() return shown(buf) == 2 end, 10000), 'the plugin shows no edit of line 2: ' .. vim.inspect(held_edit(buf))) then
    local s = state()
    if check(s.held and not s.released and not s.closed, 'line 2 drawn while the fake does not hold: ' .. vim.inspect(s)) then
      T.out('STEP drawn while held ok')
    end
  end
  api.nvim_input('<Tab>')
  if not check(wait_for(function() return T.line(buf, 2) == 'var x = g(100)' end, 3000), 'after <Tab> line 2 reads ' .. vim.inspect(T.line(buf, 2))) then
    api.nvim_input('<Tab>') -- the first <Tab> jumped: the cursor was not on the edit
    check(wait_for(function() return T.line(buf, 2) == 'var x = g(100)' end, 3000), 'after <Tab><Tab> line 2 reads ' .. vim.inspect(T.line(buf, 2)))
  end
  T.out('STEP accept first ok')
  local f = assert(io.open(os.getenv('EARLY_RELEASE'), 'w'))
  f:close()
  check(wait_for(function() return state().released end, 10000), 'the fake did not send the rest: ' .. vim.inspect(state()))
  if check(wait_for(function() return shown(buf) == 15 end, 10000), 'the plugin shows no edit of line 15: ' .. vim.inspect(held_edit(buf))) then
    check(state().asked == 1, 'the fake was asked again: ' .. vim.inspect(state()))
    T.out('STEP next drawn ok')
  end
  api.nvim_input('<Tab>')
  check(wait_for(function() return api.nvim_win_get_cursor(0)[1] == 15 end, 3000), 'the <Tab> did not jump to line 15')
  api.nvim_input('<Tab>')
  if check(wait_for(function() return T.line(buf, 15) == '\tv11 := h(11)' end, 3000), 'after <Tab><Tab> line 15 reads ' .. vim.inspect(T.line(buf, 15))) then
    T.out('STEP accept second ok')
  end
  vim.cmd('write')
end)
