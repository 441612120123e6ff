-- Headless Neovim end-to-end test of the files kept from the agent, with the plugin installed by
-- vim.pack and set up as a user would: setup({ agent = <the test agent, asking for every kind of
-- context>, exclude = { 'private/**' } }). The user edits main.go (ghost text appears and is
-- accepted), opens .env beside it, types a secret into it and saves, opens private/own.go (the
-- user's own glob), and goes back and forth, typing in each. The Go test then reads what the agent
-- received: nothing of .env or own.go.
--
-- Environment (set by e2e/nvim_plugin_test.go): ACP_PLUGIN_REPO, ACP_TEST_AGENT, NVIM_TEST_DIR (the
-- workspace; rules.json, agent.log and bridge.log live there), NVIM_TEST_LIB (shipped_lib.lua).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, ghost, agent_msgs = T.check, T.wait_for, T.sleep, T.ghost, T.agent_msgs

local f = assert(io.open(T.dir .. '/rules.json', 'w'))
f:write('[{"when":"retur","find":"retur","replace":"return nil"},{"when":"sk-live","find":"sk-live","replace":"sk-LEAK"}]')
f:close()
vim.fn.mkdir(T.dir .. '/private', 'p')
T.install()
require('acp_lsp_bridge').setup({
  agent = {
    os.getenv('ACP_TEST_AGENT'), '--rules', T.dir .. '/rules.json', '--log', T.agent_log, '--focus', '--context',
    '{"openFiles":{},"recentFiles":{"maxCount":10},"editHistory":{"maxCount":10},"relatedSnippets":{},"userActions":{"maxCount":20},"diagnostics":{}}',
  },
  log_file = T.dir .. '/bridge.log',
  exclude = { 'private/**' },
})

local function type_line(buf, text)
  api.nvim_set_current_buf(buf)
  sleep(100)
  api.nvim_input('Go' .. text)
  sleep(400)
end

T.run(function()
  local main = T.edit(T.dir .. '/main.go', 'package main\n\nfunc f() error {\n\t\n}\n')
  check(wait_for(function() return #agent_msgs('document/didOpen') > 0 end, 10000), 'the agent never got main.go')
  sleep(300)

  -- The secrets: opened (the acp client attaches, as it does to every buffer), typed into, saved.
  local env = T.edit(T.dir .. '/.env', 'API_KEY=sk-live-0123456789\n')
  type_line(env, 'export TOKEN=sk-live-typed')
  check(ghost(env) == nil, 'ghost text in .env: ' .. tostring(ghost(env)))
  api.nvim_input('<Esc>')
  sleep(50)
  vim.cmd('write')
  local own = T.edit(T.dir .. '/private/own.go', 'package private // PRIVATE-MARKER\n')
  type_line(own, '// sk-live-in-own')
  check(ghost(own) == nil, 'ghost text in own.go: ' .. tostring(ghost(own)))
  api.nvim_input('<Esc>')
  sleep(50)
  T.out('STEP secrets typed ok')

  -- Back in main.go, suggestions work as ever, with the context the agent asked for.
  api.nvim_set_current_buf(main)
  sleep(200)
  api.nvim_win_set_cursor(0, { 4, 1 })
  api.nvim_input('Aretur')
  if check(wait_for(function() return ghost(main) ~= nil end, 8000), 'no ghost text after typing "retur" in main.go') then
    T.accept(main, 4, '\treturn nil', '<Tab>', function() api.nvim_input('<Tab>') end)
  end
  api.nvim_input('<Esc>')
  sleep(50)

  -- And once more in the secret, then close it.
  type_line(env, '# sk-live-again')
  check(ghost(env) == nil, 'ghost text in .env at the end: ' .. tostring(ghost(env)))
  api.nvim_input('<Esc>')
  sleep(50)
  vim.cmd('write')
  vim.cmd('bdelete ' .. env)
  sleep(300)
end)
