-- Headless Neovim end-to-end test of the statusline per buffer, with the plugin installed by
-- vim.pack and set up as a user would: setup({ agent = <the scripted test agent> }). Two buffers:
-- main.go, which the agent gets (status ready), and .env, kept from the agent by the bridge's
-- default exclusions (status excluded). require('acp_lsp_bridge').status() shows the current
-- buffer's own status: switching buffers shows each one's at once, before the bridge has heard of
-- the switch, and after; two windows side by side each show their buffer's in their statusline.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_plugin_test.go): ACP_PLUGIN_REPO, ACP_TEST_AGENT, NVIM_TEST_DIR (the
-- workspace; rules.json and agent.log live there), NVIM_TEST_LIB (shipped_lib.lua).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep = T.check, T.wait_for, T.sleep

T.install()
local acp = require('acp_lsp_bridge')
acp.setup({ agent = T.scripted_agent('[]') })

local READY, EXCLUDED = '✓ next edit', '⊘ next edit'

T.run(function()
  local main = T.edit(T.dir .. '/main.go', 'package main\n')
  check(wait_for(function() return acp.status() == READY end, 10000), 'main.go: status() is ' .. vim.inspect(acp.status()))
  local env = T.edit(T.dir .. '/.env', 'KEY=sk-0\n')
  check(wait_for(function() return acp.status() == EXCLUDED end, 5000), '.env: status() is ' .. vim.inspect(acp.status()))
  T.out('STEP each ok')

  -- Back and forth: each buffer's own status, at once (the bridge hears of the switch only after
  -- this code has run) and once the bridge has said it again.
  for _, step in ipairs({ { main, 'main.go', READY }, { env, '.env', EXCLUDED }, { main, 'main.go', READY } }) do
    local buf, name, want = step[1], step[2], step[3]
    api.nvim_set_current_buf(buf)
    check(acp.status() == want, name .. ' entered: status() is ' .. vim.inspect(acp.status()) .. ', want ' .. want)
    sleep(300)
    check(acp.status() == want, name .. ' a while after: status() is ' .. vim.inspect(acp.status()) .. ', want ' .. want)
  end
  T.out('STEP switch ok')

  -- Two windows: each statusline shows its own buffer's status, whichever the bridge spoke of last.
  vim.o.statusline = "%t %{v:lua.require'acp_lsp_bridge'.status()}"
  vim.cmd('vsplit')
  api.nvim_win_set_buf(0, env)
  sleep(300)
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    local buf = api.nvim_win_get_buf(win)
    local want = (buf == env and '.env ' .. EXCLUDED) or ('main.go ' .. READY)
    local got = api.nvim_eval_statusline(vim.o.statusline, { winid = win }).str
    check(got == want, ('the statusline of the window of %s: %q, want %q'):format(api.nvim_buf_get_name(buf), got, want))
  end
  T.out('STEP windows ok')
end)
