-- Headless Neovim end-to-end test of acp-lsp-bridge/suggestionReady (e2e/nvim_plugin_test.go): the
-- bridge asks the agent ahead once the buffer is still, and says when the suggestion is ready; the
-- plugin then asks for the ghost text at once. To see that it is the plugin's doing, Neovim's own
-- request while typing (200 ms after the last change) is taken away from the buffer first: only
-- the notification can bring the ghost text.
--   - ready: typing "fmt.Prin" shows "tln(err)" as ghost text; the agent was asked once after the
--     last key, no sooner than the delay (setup({ delay = 1200 })) after it and well before the
--     delay would have ended counted from a request of Neovim's; <Tab> takes it;
--   - unheard: with the plugin's handler taken away, typing "retur" shows nothing.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_plugin_test.go): ACP_PLUGIN_REPO, ACP_TEST_AGENT, NVIM_TEST_DIR,
-- NVIM_TEST_LIB. Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED".

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, ghost, agent_msgs = T.check, T.wait_for, T.sleep, T.ghost, T.agent_msgs

local DELAY = 1200
local RULES = vim.json.encode({
  { when = 'fmt.Prin', find = 'fmt.Prin', replace = 'fmt.Println(err)' },
  { when = 'retur', find = 'retur', replace = 'return nil' },
})
T.install()
local acp = require('acp_lsp_bridge')
acp.setup({ agent = T.scripted_agent(RULES), delay = DELAY })

-- Neovim's own automatic request for buf: its inline completion asks 200 ms after each change.
-- Taken away, so that only the plugin's answer to the bridge's notification asks while typing.
local function without_neovims_own_request(buf)
  local completor = require('vim.lsp._capability').all.inline_completion.active[buf]
  if not check(completor ~= nil, "the buffer has no inline completion") then
    return false
  end
  api.nvim_clear_autocmds({ group = completor.augroup, event = { 'InsertEnter', 'CursorMovedI', 'TextChangedP' } })
  return true
end

T.run(function()
  local buf = T.edit(T.dir .. '/main.go', 'package main\n\nfunc f() error {\n\t\n\t\n}\n')
  check(wait_for(function() return #agent_msgs('document/didOpen') > 0 end, 10000), 'the agent never got the document')
  check(wait_for(function() return require('vim.lsp._capability').all.inline_completion.active[buf] ~= nil end, 5000), 'inline completion is not on in the buffer')
  sleep(300)
  -- The bridge asks ahead only for an editor that asks while the user types: Neovim's first
  -- request, before its own are taken away.
  T.type_at_end(5, 'x')
  check(wait_for(function() return #agent_msgs('nes/suggest') > 0 end, 8000), 'Neovim never asked')
  api.nvim_input('<BS><Esc>')
  sleep(DELAY + 500)
  if not without_neovims_own_request(buf) then
    return
  end

  local last_change
  api.nvim_create_autocmd('TextChangedI', { buffer = buf, callback = function() last_change = vim.uv.hrtime() end })

  -- ready
  local before = #agent_msgs('nes/suggest')
  T.type_at_end(4, 'fmt.Prin')
  local asked_after
  check(wait_for(function()
    if asked_after == nil and #agent_msgs('nes/suggest') > before then
      asked_after = (vim.uv.hrtime() - last_change) / 1e6
    end
    return ghost(buf) ~= nil
  end, 10000), 'no ghost text after typing "fmt.Prin"')
  check(ghost(buf) == 'tln(err)', 'the ghost text: ' .. vim.inspect(ghost(buf)))
  check(#agent_msgs('nes/suggest') == before + 1, ('the agent was asked %d times, want once'):format(#agent_msgs('nes/suggest') - before))
  -- Counted from the last key, not from a request of Neovim's (none here; Neovim's own comes
  -- 200 ms after the last key, the plugin's only after the answer): seen by polling the agent's
  -- log, so a poll or two late.
  check(asked_after ~= nil and asked_after >= DELAY and asked_after < DELAY + 200,
    ('the agent was asked %s ms after the last key, want the delay (%d ms) after it'):format(tostring(asked_after), DELAY))
  api.nvim_input('<Tab>')
  check(wait_for(function() return T.line(buf, 4) == '\tfmt.Println(err)' end, 3000), 'after <Tab> the line reads ' .. vim.inspect(T.line(buf, 4)))
  T.out(('STEP ready ok: asked %.0f ms after the last key'):format(asked_after or -1))
  api.nvim_input('<Esc>')
  sleep(DELAY + 300)

  -- unheard
  local handler = acp.suggestion_ready
  acp.suggestion_ready = function() end
  before = #agent_msgs('nes/suggest')
  T.type_at_end(5, 'retur')
  check(wait_for(function() return #agent_msgs('nes/suggest') > before end, 10000), 'the bridge did not ask ahead')
  sleep(1000)
  check(ghost(buf) == nil, 'ghost text without the plugin asking: ' .. vim.inspect(ghost(buf)))
  acp.suggestion_ready = handler
  T.out('STEP unheard ok')
  api.nvim_input('<Esc>')
  sleep(50)
end)
