-- Headless Neovim end-to-end test of the plugin's delay and switch, installed with vim.pack and set
-- up as a user who wants quiet:
--   require('acp_lsp_bridge').setup({ agent = <the scripted test agent>, delay = 600, automatic = false })
-- the bridge found on the PATH. While suggestions while typing are off, typing shows nothing and
-- the agent is asked nothing. `:AcpLspBridge enable buffer` turns them on for the buffer (the
-- message says so); typing then shows the ghost text, no sooner than the delay after the last key.
-- `:AcpLspBridge disable buffer` turns them off again: typing asks nothing. A bad argument gets a
-- message that says what to write.
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

-- What the user is told (vim.notify), in order.
local said = T.record_notify()
local function told(text)
  return wait_for(function()
    for _, m in ipairs(said) do
      if m:find(text, 1, true) then
        return true
      end
    end
    return false
  end, 5000)
end

T.install()
local acp = require('acp_lsp_bridge')
acp.setup({ agent = T.scripted_agent(RULES), delay = 600, automatic = false })

local type_at_end = T.type_at_end

T.run(function()
  local buf = T.edit(T.dir .. '/main.go', 'package main\n\nfunc f() error {\n\t\n\t\n}\n')
  check(wait_for(function() return #agent_msgs('document/didOpen') > 0 end, 10000), 'the agent never got the document')
  -- vim.lsp.inline_completion sets the buffer up in a vim.schedule after LspAttach; keys typed
  -- before that ask nothing. Give it time on a loaded machine.
  sleep(300)

  -- Off from the start: the statusline says so, and typing asks nothing.
  vim.o.statusline = "%t %{v:lua.require'acp_lsp_bridge'.status()}"
  local function statusline()
    return api.nvim_eval_statusline(vim.o.statusline, {}).str
  end
  check(wait_for(function() return statusline() == 'main.go ○ next edit off' end, 5000), 'the statusline: ' .. statusline())
  type_at_end(4, 'retur')
  sleep(2000)
  check(ghost(buf) == nil, 'ghost text while suggestions while typing are off: ' .. vim.inspect(ghost(buf)))
  check(#agent_msgs('nes/suggest') == 0, 'the agent was asked while suggestions were off')
  api.nvim_input('<Esc>')
  sleep(50)
  T.out('STEP off ok')

  -- On for this buffer: the ghost text comes, the delay after the last key at the soonest.
  vim.cmd('AcpLspBridge enable buffer')
  check(told('suggestions while typing are on for main.go'), 'no message after :AcpLspBridge enable buffer: ' .. vim.inspect(said))
  check(wait_for(function() return statusline() == 'main.go ✓ next edit' end, 5000), 'the statusline after enable: ' .. statusline())
  type_at_end(5, 'fmt.Prin')
  local last_key = vim.uv.hrtime()
  local shown = wait_for(function() return ghost(buf) ~= nil end, 8000)
  local after = (vim.uv.hrtime() - last_key) / 1e6
  if check(shown, 'no ghost text after :AcpLspBridge enable buffer and typing "fmt.Prin"') then
    check(after >= 600, ('the ghost text came %d ms after the last key, within the 600 ms delay'):format(after))
    T.accept(buf, 5, '\tfmt.Println(err)', '<Tab>', function() api.nvim_input('<Tab>') end)
    T.out(('STEP on ok: ghost text %d ms after the last key'):format(after))
  end
  api.nvim_input('<Esc>')
  sleep(50)

  -- Off again for this buffer.
  vim.cmd('AcpLspBridge disable buffer')
  check(told('suggestions while typing are off for main.go'), 'no message after :AcpLspBridge disable buffer')
  check(wait_for(function() return statusline() == 'main.go ○ next edit off' end, 5000), 'the statusline after disable: ' .. statusline())
  local asked = #agent_msgs('nes/suggest')
  api.nvim_buf_set_lines(buf, 3, 4, false, { '\t' })
  type_at_end(4, 'retur')
  sleep(2000)
  check(ghost(buf) == nil, 'ghost text after :AcpLspBridge disable buffer')
  check(#agent_msgs('nes/suggest') == asked, 'the agent was asked after :AcpLspBridge disable buffer')
  api.nvim_input('<Esc>')
  sleep(50)
  T.out('STEP off again ok')

  -- :checkhealth shows the last state, with its message.
  vim.cmd('checkhealth acp_lsp_bridge')
  local report = table.concat(api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(report:find('off: suggestions while typing are off for main.go', 1, true) ~= nil, ':checkhealth does not show the state: ' .. report)
  vim.cmd('close')
  T.out('STEP statusline and health ok')

  -- A mistake says what to write.
  pcall(vim.cmd, 'AcpLspBridge pause')
  check(told('want enable, disable or toggle'), 'no help after :AcpLspBridge pause')
end)
