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

-- The guide's Lua, as a user copies it, the bridge's path changed.
local guide = assert(io.open(os.getenv('ACP_GUIDE'))):read('*a')
local blocks = 0
for code in guide:gmatch('```lua\n(.-)```') do
  code = code:gsub("'acp%-lsp%-bridge',", function() return vim.inspect(os.getenv('ACP_LSP_BRIDGE')) .. ',' end)
  assert(load(code, 'copilot-lsp.md'))()
  blocks = blocks + 1
end
check(blocks == 2, 'the guide has ' .. blocks .. ' Lua blocks, want 2 (config and keymaps)')

local function line(buf, row)
  return api.nvim_buf_get_lines(buf, row - 1, row, false)[1]
end

-- The ends the bridge sent the agent, from its trace: {method, id}.
local function ends()
  local out = {}
  for l in io.lines(os.getenv('ACP_TRACE')) do
    local ok, rec = pcall(vim.json.decode, l)
    if ok and rec.dir == 'bridge→agent' and (rec.message.method == 'nes/accept' or rec.message.method == 'nes/reject') then
      table.insert(out, { rec.message.method, rec.message.params.id, rec.message.params.reason })
    end
  end
  return out
end

local ns = api.nvim_create_namespace('copilotlsp.nes')
local function drawn(buf)
  return #api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}) > 0
end

-- The suggestion the plugin holds: its range's start line (1-based) and text.
local function shown(buf)
  local s = vim.b[buf].nes_state
  return s and (s.range.start.line + 1), s and s.text
end

T.run(function()
  local path = T.dir .. '/total.go'
  local fw = assert(io.open(path, 'w'))
  fw:write(table.concat({
    'package main',
    '',
    '// Total adds the prices, in €.',
    'func Total(prices []int) int {',
    '\tsum := 0 // 日本',
    '\tfor _, p := range prices {',
    '\t\tsum += p // é',
    '\t}',
    '\treturn sum',
    '}',
    '',
  }, '\n'))
  fw:close()
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  check(wait_for(function() return #vim.lsp.get_clients({ bufnr = buf, name = 'copilot_ls' }) > 0 end, 10000), 'copilot_ls did not attach')
  sleep(500) -- the built-in agent starts in the background

  -- Rename sum to acc where it is declared: the plugin draws the rename of the next use.
  api.nvim_win_set_cursor(0, { 5, 1 })
  api.nvim_input('cwacc<Esc>')
  check(wait_for(function() return shown(buf) == 7 end, 10000), 'no suggestion on line 7: ' .. vim.inspect(vim.b[buf].nes_state))
  check(drawn(buf), 'the plugin drew nothing')
  local first = vim.b[buf].nes_state.command.arguments[1]
  T.out('STEP drawn ok')

  -- Tab jumps to it; Tab again applies it, and the guide's mapping runs its command.
  api.nvim_input('<Tab>')
  check(wait_for(function() return api.nvim_win_get_cursor(0)[1] == 7 end, 3000), 'the first <Tab> did not jump to line 7')
  T.out('STEP jump ok')
  api.nvim_input('<Tab>')
  check(wait_for(function() return line(buf, 7) == '\t\tacc += p // é' end, 3000), 'after <Tab><Tab> line 7 reads ' .. vim.inspect(line(buf, 7)))
  check(wait_for(function() return #ends() >= 1 end, 3000), 'the agent heard nothing after the accept')
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
  check(wait_for(function() return #ends() >= 2 end, 3000), 'the agent heard nothing after <Esc>')
  api.nvim_input('<Tab>')
  sleep(400)
  check(line(buf, 9) == '\treturn sum', 'a <Tab> after <Esc> applied the dismissed edit: line 9 reads ' .. vim.inspect(line(buf, 9)))
  T.out('STEP dismiss ok')

  -- Each id ended once (suggestions asked for while typing and never shown end as ignored): the
  -- first shown accepted, the second rejected.
  sleep(300)
  local got, seen, verdict = ends(), {}, {}
  for _, e in ipairs(got) do
    check(not seen[e[2]], e[2] .. ' ended twice: ' .. vim.inspect(got))
    seen[e[2]] = true
    verdict[e[2]] = e[1] .. (e[3] and (' ' .. e[3]) or '')
  end
  check(verdict[first] == 'nes/accept' and verdict[second] == 'nes/reject rejected',
    'the agent heard ' .. vim.inspect(got) .. ', want nes/accept ' .. first .. ' and nes/reject ' .. second .. ' rejected')
  T.out('STEP ends ok')
end)
