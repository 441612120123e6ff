-- Headless Neovim end-to-end test of the plugin's keys, installed with vim.pack and set up with
-- require('acp_lsp_bridge').setup({ agent = <the scripted test agent> }), the bridge found on the
-- PATH: ghost text appears as the user types, <Tab> accepts it (the buffer changes, the agent hears
-- nes/accept), <C-]> dismisses another (the buffer stays, the agent hears nes/reject "rejected"),
-- and status() says when a request is in flight.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_plugin_test.go): ACP_PLUGIN_REPO, ACP_TEST_AGENT, NVIM_TEST_DIR (the
-- workspace; rules.json and agent.log live there), NVIM_TEST_LIB (shipped_lib.lua).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, ghost, agent_msgs = T.check, T.wait_for, T.sleep, T.ghost, T.agent_msgs

local RULES = '[{"when":"retur","find":"retur","replace":"return nil"},{"when":"fmt.Prin","find":"fmt.Prin","replace":"fmt.Println(err)"}]'
T.install()
local acp = require('acp_lsp_bridge')
acp.setup({ agent = T.scripted_agent(RULES) })

local type_at_end = T.type_at_end

T.run(function()
  local buf = T.edit(T.dir .. '/main.go', 'package main\n\nfunc f() error {\n\t\n\t\n}\n')
  check(wait_for(function() return acp.status() == '✓ next edit' end, 5000), 'status() is not "✓ next edit" before any request: ' .. acp.status())
  check(wait_for(function() return #agent_msgs('document/didOpen') > 0 end, 10000), 'the agent never got the document')
  -- vim.lsp.inline_completion sets the buffer up in a vim.schedule after LspAttach; keys typed
  -- before that ask nothing. Give it time on a loaded machine.
  sleep(300)

  -- Accept with <Tab>. When a request to the bridge starts, the plugin's LspRequest handler
  -- (defined first, so run first) has marked the buffer busy.
  local saw_busy = false
  api.nvim_create_autocmd('LspRequest', {
    callback = function(ev)
      if ev.data.request and ev.data.request.type == 'pending' then
        saw_busy = saw_busy or acp.status() == '⋯ next edit'
      end
    end,
  })
  type_at_end(4, 'retur')
  local shown = wait_for(function() return ghost(buf) ~= nil end, 8000)
  if check(shown, 'no ghost text after typing "retur"') then
    T.accept(buf, 4, '\treturn nil', '<Tab>', function() api.nvim_input('<Tab>') end)
    check(wait_for(function() return #agent_msgs('nes/accept') == 1 end, 3000), 'the agent did not hear nes/accept')
  end
  check(saw_busy, 'status() never showed the request in flight')
  check(wait_for(function() return acp.status() == '✓ next edit' end, 3000), 'status() stays busy: ' .. acp.status())
  api.nvim_input('<Esc>')
  sleep(50)

  -- Dismiss with <C-]>.
  type_at_end(5, 'fmt.Prin')
  if check(wait_for(function() return ghost(buf) ~= nil end, 8000), 'no ghost text after typing "fmt.Prin"') then
    api.nvim_input('<C-]>')
    check(wait_for(function()
      for _, m in ipairs(agent_msgs('nes/reject')) do
        if m.params and m.params.reason == 'rejected' then
          return true
        end
      end
      return false
    end, 3000), 'the agent did not hear nes/reject "rejected"')
    check(wait_for(function() return ghost(buf) == nil end, 3000), 'the ghost text stayed after <C-]>')
    check(api.nvim_buf_get_lines(buf, 4, 5, false)[1] == '\tfmt.Prin', 'the dismissed suggestion changed the buffer: ' .. vim.inspect(api.nvim_buf_get_lines(buf, 4, 5, false)[1]))
    T.out('STEP dismiss ok')
  end
  api.nvim_input('<Esc>')
  sleep(50)
end)
