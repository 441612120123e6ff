-- Headless Neovim end-to-end test of the quieter display's one wait: the plugin installed with
-- vim.pack and set up with setup({ display = 'mark', delay = 600, agent = <the test agent> }), the
-- bridge found on the PATH. The agent always suggests the same edit, two lines below where the user
-- types. The user types four keys, 60 ms apart. The bridge's delay is the only wait between the
-- last key and the mark:
--   - the plugin asks at once: within each change's own TextChangedI, before the next key, its
--     copilotInlineEdit for that text is already sent, and the one before it cancelled;
--   - Neovim's own ghost text asks nothing (its request would supersede the mark's at the bridge);
--   - the agent is asked once, for the last text, no sooner than the delay after the last key;
--   - the mark comes for the last text, after that, and before the delay and a generous margin.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_plugin_test.go): ACP_PLUGIN_REPO, ACP_TEST_AGENT, NVIM_TEST_DIR (the
-- workspace; answer.json and agent.log live there), NVIM_TEST_LIB (shipped_lib.lua; mark_lib.lua,
-- beside it, writes the agent's answer).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, agent_msgs = T.check, T.wait_for, T.sleep, T.agent_msgs

local DELAY = 600
-- How much later than the delay the mark may come: the answer's way back (the test agent answers at
-- once) and this script's polling take a few milliseconds; a loaded machine can take more. A wait
-- of the plugin's own, on top of the delay, is told by the order of events above, not by this.
local MARGIN = 300
-- How much sooner than the delay the agent may be asked, measured from the last key's TextChangedI:
-- Neovim sends the change to the bridge (on_lines) before that autocommand runs.
local EARLY = 50

local mark = dofile(vim.fs.dirname(os.getenv('NVIM_TEST_LIB')) .. '/mark_lib.lua')(T)
T.install()
require('acp_lsp_bridge').setup({
  display = 'mark',
  delay = DELAY,
  agent = mark.agent,
})

local function now()
  return vim.uv.hrtime() / 1e6
end

T.run(function()
  local buf = T.edit(mark.path, mark.text)
  check(wait_for(function() return #agent_msgs('document/didOpen') > 0 end, 10000), 'the agent never got the document')
  sleep(300)

  -- The plugin's requests, as Neovim sends and cancels them, with the buffer's text (changedtick)
  -- when sent; Neovim's own inline completion requests.
  local sent, cancelled, inline = {}, {}, 0
  api.nvim_create_autocmd('LspRequest', {
    callback = function(ev)
      local req = ev.data.request
      if req.method == 'textDocument/inlineCompletion' and req.type == 'pending' then
        inline = inline + 1
      end
      if req.method ~= 'textDocument/copilotInlineEdit' then
        return
      end
      if req.type == 'pending' then
        sent[#sent + 1] = { id = ev.data.request_id, tick = api.nvim_buf_get_changedtick(buf) }
      elseif req.type == 'cancel' then
        cancelled[ev.data.request_id] = true
      end
    end,
  })
  -- Each change, with whether the plugin had asked for its text by the time its TextChangedI ran
  -- (this autocommand is defined after the plugin's, so it runs after it).
  local changes = {}
  api.nvim_create_autocmd('TextChangedI', {
    buffer = buf,
    callback = function()
      local tick = api.nvim_buf_get_changedtick(buf)
      local last = sent[#sent]
      changes[#changes + 1] = { tick = tick, at = now(), asked = last ~= nil and last.tick == tick }
    end,
  })
  local suggests = #agent_msgs('nes/suggest')

  api.nvim_win_set_cursor(0, { 5, 1 })
  api.nvim_input('A')
  sleep(100)
  for _, key in ipairs({ 'a', 'b', 'c', 'd' }) do
    api.nvim_input(key)
    sleep(60)
  end
  -- The agent's nes/suggest and the mark, seen as they come.
  local asked_at, marked_at
  check(wait_for(function()
    if not asked_at and #agent_msgs('nes/suggest') > suggests then
      asked_at = now()
    end
    if not marked_at and T.drawn_mark(buf).signs[1] == 6 then
      marked_at = now()
    end
    return asked_at and marked_at
  end, 8000), ('no mark after typing: asked %s, marked %s'):format(tostring(asked_at), tostring(marked_at)))
  sleep(300)

  check(#changes == 4, 'changes seen: ' .. vim.inspect(changes))
  for i, c in ipairs(changes) do
    check(c.asked, ('change %d (changedtick %d) was not asked for at once: requests %s'):format(i, c.tick, vim.inspect(sent)))
  end
  for i = 1, #sent - 1 do
    check(cancelled[sent[i].id], ('request %d (changedtick %d) was not cancelled by the next: cancelled %s'):format(i, sent[i].tick, vim.inspect(cancelled)))
  end
  check(inline == 0, ('Neovim asked for ghost text %d times in the quieter display'):format(inline))
  T.out('STEP asked at once ok: ' .. #sent .. ' requests')

  local last = changes[#changes]
  local msgs = agent_msgs('nes/suggest')
  check(#msgs == suggests + 1, ('the agent was asked %d times for four keys, want once'):format(#msgs - suggests))
  local version = vim.lsp.util.buf_versions[buf]
  check(msgs[#msgs] and msgs[#msgs].params.version == version,
    ('the agent was asked for version %s, want the last text\'s %d'):format(vim.inspect(msgs[#msgs] and msgs[#msgs].params.version), version))
  if asked_at and marked_at and last then
    local asked_after, marked_after = asked_at - last.at, marked_at - last.at
    check(asked_after >= DELAY - EARLY, ('the agent was asked %.0f ms after the last key, before the delay (%d ms)'):format(asked_after, DELAY))
    check(marked_at >= asked_at, 'the mark came before the agent was asked')
    check(marked_after < DELAY + MARGIN, ('the mark came %.0f ms after the last key: more than the delay (%d ms) and %d ms'):format(marked_after, DELAY, MARGIN))
    T.out(('STEP one wait ok: the agent asked %.0f ms, the mark %.0f ms after the last key'):format(asked_after, marked_after))
  end
  local m = T.drawn_mark(buf)
  check(m.hints[1] and m.hints[1][2] == '⇥ next edit, line 6', 'the mark: ' .. vim.inspect(m))
  api.nvim_input('<Esc>')
  sleep(50)
end)
