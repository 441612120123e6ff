-- Headless Neovim end-to-end test with the bridge running the Copilot stand-in (acp-test-agent
-- --copilot: GitHub Copilot's language server as its --acp mode behaves, signed in through
-- GH_COPILOT_TOKEN, suggestions from rules), the plugin installed with vim.pack and set up with
-- that agent. Run by e2e/copilot_standin_test.go; COPILOT_CASE picks the case:
--
--   ghost  ghost text appears as the user types; <Tab> accepts it (the buffer, the cursor at the
--          end of the inserted text, nes/accept); <C-]> dismisses another (the buffer unchanged,
--          nes/reject "rejected", counted as a rejection); typing on over a third ends it with a
--          reason other than "rejected" (counted as ignored).
--   drop   the stand-in drops a didChange (COPILOT_DROP, --drop-change) made while the user types
--          "retur" a key at a time; the user keeps typing, and the ghost text is still the right
--          one: <Tab> takes it, and the stand-in's copy (--mirror-dir) is the buffer.
--
-- Environment (set by the Go test): ACP_PLUGIN_REPO, ACP_TEST_AGENT, NVIM_TEST_DIR (the workspace;
-- rules.json and agent.log live there), NVIM_TEST_LIB (shipped_lib.lua), GH_COPILOT_TOKEN.
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, ghost, agent_msgs = T.check, T.wait_for, T.sleep, T.ghost, T.agent_msgs

local RULES = vim.json.encode({
  { when = 'retur', find = 'retur', replace = 'return nil' },
  { when = 'fmt.Prin', find = 'fmt.Prin', replace = 'fmt.Println(err)' },
  { when = 'log.Pri', find = 'log.Pri', replace = 'log.Printf("%v", err)' },
})
local case = os.getenv('COPILOT_CASE')
local mirror = T.dir .. '/mirror'
vim.fn.mkdir(mirror, 'p')
local extra = { '--copilot', '--mirror-dir', mirror }
if case == 'drop' then
  vim.list_extend(extra, { '--drop-change', os.getenv('COPILOT_DROP') })
end
T.install()
local acp = require('acp_lsp_bridge')
acp.setup({ agent = T.scripted_agent(RULES, unpack(extra)) })

-- The params of the stand-in's test/copilotReject records: {id, counted}.
local function counted(from)
  local out = {}
  for i, m in ipairs(agent_msgs('test/copilotReject')) do
    if i > (from or 0) then
      out[#out + 1] = m.params
    end
  end
  return out
end

local function text(buf)
  return table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
end

local function ghost_case(buf)
  -- A diagnostic Neovim shows: the plugin passes it on, and Copilot asks for diagnostics in
  -- nes/suggest's context (the Go test reads it in the stand-in's log).
  vim.diagnostic.set(api.nvim_create_namespace('copilot-standin'), buf, {
    { lnum = 6, col = 0, end_col = 1, severity = vim.diagnostic.severity.ERROR, message = 'missing return' },
  })
  sleep(100)
  -- Accept with <Tab>: the suggestion has no cursorPosition, so the cursor is where accepting ghost
  -- text leaves it, at the end of the inserted text.
  T.type_at_end(4, 'retur')
  if check(wait_for(function() return ghost(buf) ~= nil end, 8000), 'no ghost text after typing "retur"') then
    check(ghost(buf) == 'n nil', 'the ghost text after "retur" is ' .. vim.inspect(ghost(buf)) .. ', want "n nil"')
    T.accept(buf, 4, '\treturn nil', '<Tab>', function() api.nvim_input('<Tab>') end)
    local cur = api.nvim_win_get_cursor(0)
    check(cur[1] == 4 and cur[2] == #'\treturn nil', 'after accepting, the cursor is at ' .. vim.inspect(cur) .. ', want { 4, 11 }')
    check(wait_for(function() return #agent_msgs('nes/accept') == 1 end, 3000), 'the stand-in did not hear nes/accept once: ' .. #agent_msgs('nes/accept'))
  end
  api.nvim_input('<Esc>')
  sleep(100)

  -- Dismiss with <C-]>.
  local before = #counted()
  T.type_at_end(5, 'fmt.Prin')
  if check(wait_for(function() return ghost(buf) ~= nil end, 8000), 'no ghost text after typing "fmt.Prin"') then
    check(ghost(buf) == 'tln(err)', 'the ghost text after "fmt.Prin" is ' .. vim.inspect(ghost(buf)))
    for _, m in ipairs(agent_msgs('nes/reject')) do
      check(m.params.reason ~= 'rejected', 'before any dismissal the stand-in got ' .. vim.inspect(m.params))
    end
    api.nvim_input('<C-]>')
    check(wait_for(function()
      for _, c in ipairs(counted(before)) do
        if c.counted == 'rejected' then
          return true
        end
      end
      return false
    end, 3000), 'the stand-in counted no rejection after <C-]>: ' .. vim.inspect(counted(before)))
    for _, m in ipairs(agent_msgs('nes/reject')) do
      for _, c in ipairs(counted(before)) do
        if c.id == m.params.id and c.counted == 'rejected' then
          check(m.params.reason == 'rejected', 'the dismissal reached the stand-in as ' .. vim.inspect(m.params))
        end
      end
    end
    check(wait_for(function() return ghost(buf) == nil end, 3000), 'the ghost text stayed after <C-]>')
    check(T.line(buf, 5) == '\tfmt.Prin', 'the dismissed suggestion changed the buffer: ' .. vim.inspect(T.line(buf, 5)))
    T.out('STEP dismiss ok')
  end
  api.nvim_input('<Esc>')
  sleep(100)

  -- Type on over a third: it ends, not as a rejection.
  T.type_at_end(6, 'log.Pri')
  if check(wait_for(function() return ghost(buf) ~= nil end, 8000), 'no ghost text after typing "log.Pri"') then
    local from, rejects = #counted(), #agent_msgs('nes/reject')
    api.nvim_input('z')
    check(wait_for(function() return #counted(from) > 0 end, 5000), 'typing over the ghost text ended no suggestion')
    sleep(300)
    for _, c in ipairs(counted(from)) do
      check(c.counted == 'ignored', 'typing over the ghost text counted ' .. c.id .. ' as ' .. c.counted)
    end
    for i, m in ipairs(agent_msgs('nes/reject')) do
      if i > rejects then
        check(m.params.reason ~= nil and m.params.reason ~= 'rejected', 'typing over the ghost text sent ' .. vim.inspect(m.params))
      end
    end
    check(T.line(buf, 6) == '\tlog.Priz', 'after typing over, line 6 reads ' .. vim.inspect(T.line(buf, 6)))
    T.out('STEP type over ok')
  end
  api.nvim_input('<Esc>')
  sleep(100)
end

local function drop_case(buf)
  local failed = T.failed
  -- A key at a time, each its own didChange (Neovim sends them 150 ms after the last key, and
  -- before each request).
  vim.api.nvim_win_set_cursor(0, { 4, 1 })
  api.nvim_input('A')
  for _, key in ipairs({ 'r', 'e', 't', 'u', 'r' }) do
    sleep(450)
    api.nvim_input(key)
  end
  if check(wait_for(function() return ghost(buf) ~= nil end, 8000), 'no ghost text after typing "retur" (the dropped change never repaired?)') then
    check(ghost(buf) == 'n nil', 'the ghost text after "retur" is ' .. vim.inspect(ghost(buf)) .. ', want "n nil"')
    T.accept(buf, 4, '\treturn nil', '<Tab>', function() api.nvim_input('<Tab>') end)
    check(wait_for(function() return #agent_msgs('nes/accept') == 1 end, 3000), 'the stand-in did not hear nes/accept')
  end
  api.nvim_input('<Esc>')
  check(wait_for(function()
    local f = io.open(mirror .. '/main.go')
    local got = f and f:read('*a')
    if f then
      f:close()
    end
    return got == text(buf)
  end, 3000), "the stand-in's copy is not the buffer")
  check(#agent_msgs('test/droppedChange') == 1, 'the stand-in dropped no change')
  if T.failed == failed then
    T.out('STEP drop ok')
  end
end

T.run(function()
  local buf = T.edit(T.dir .. '/main.go', 'package main\n\nfunc f() error {\n\t\n\t\n\t\n}\n')
  check(wait_for(function() return #agent_msgs('document/didOpen') > 0 end, 10000), 'the stand-in never got the document')
  -- vim.lsp.inline_completion sets the buffer up in a vim.schedule after LspAttach; keys typed
  -- before that ask nothing.
  sleep(300)
  if case == 'drop' then
    drop_case(buf)
  else
    ghost_case(buf)
  end
  io.open(T.dir .. '/buffer.txt', 'w'):write(text(buf)):close()
  if T.failed then
    local f = io.open(T.agent_log)
    T.out("the stand-in's log:\n" .. (f and f:read('*a') or '(none)'))
  end
end)
