-- Headless Neovim end-to-end test of the plugin's partial accept and alternatives, installed with
-- vim.pack and set up with require('acp_lsp_bridge').setup({ agent = <the scripted test agent> }),
-- the bridge found on the PATH:
--   - typing "fmt.Prin" shows "fmt.Println(err)" as ghost text; <M-Right> takes the next word
--     ("tln"): the line reads "\tfmt.Println" and the rest, "(err)", is shown again; the agent has
--     heard no nes/accept yet. <Tab> takes the rest: the agent hears nes/accept, once, for that
--     same suggestion;
--   - typing "retur", the agent offers two alternatives, "return nil" then "return err": the
--     first is shown, <M-]> shows the second with "(2/2)", <M-[> the first again, <M-]> and <Tab>
--     take the second; the agent hears nes/accept for the second;
--   - <M-C-Right> takes a line at a time of a two-line suggestion;
--   - a word taken of another suggestion, then the user types elsewhere and gets a new one: the
--     agent hears nes/reject "replaced" for the one partly taken, never nes/accept.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_plugin_test.go): ACP_PLUGIN_REPO, ACP_TEST_AGENT, NVIM_TEST_DIR (the
-- workspace; rules.json and agent.log live there), NVIM_TEST_LIB (shipped_lib.lua).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, ghost, agent_msgs = T.check, T.wait_for, T.sleep, T.ghost, T.agent_msgs
local type_at_end = T.type_at_end

local RULES = vim.json.encode({
  { when = 'fmt.Prin', find = 'fmt.Prin', replace = 'fmt.Println(err)' },
  { when = 'retur', find = 'retur', replace = 'return nil' },
  { when = 'retur', find = 'retur', replace = 'return err', alternative = true },
  { when = 'defe', find = 'defe', replace = 'defer f.Close()\n\tdefer g.Close()' },
})
T.install()
local acp = require('acp_lsp_bridge')
acp.setup({ agent = T.scripted_agent(RULES) })

-- The ghost text shown on the line, as one string (with the alternative's hint), or nil.
local function shown(buf)
  return ghost(buf)
end

local function accepts()
  local ids = {}
  for _, m in ipairs(agent_msgs('nes/accept')) do
    ids[#ids + 1] = m.params.id
  end
  return ids
end

T.run(function()
  local buf = T.edit(T.dir .. '/main.go', 'package main\n\nfunc f() error {\n\t\n\t\n\t\n}\n')
  check(wait_for(function() return #agent_msgs('document/didOpen') > 0 end, 10000), 'the agent never got the document')
  sleep(300)

  -- A word at a time.
  type_at_end(4, 'fmt.Prin')
  if check(wait_for(function() return shown(buf) ~= nil end, 8000), 'no ghost text after typing "fmt.Prin"') then
    api.nvim_input('<M-Right>')
    check(wait_for(function() return T.line(buf, 4) == '\tfmt.Println' end, 3000), 'after <M-Right> the line reads ' .. vim.inspect(T.line(buf, 4)))
    check(wait_for(function() return shown(buf) == '(err)' end, 5000), 'after <M-Right> the rest is not shown: ' .. vim.inspect(ghost(buf)))
    check(#accepts() == 0, 'nes/accept after a part: ' .. vim.inspect(accepts()))
    api.nvim_input('<Tab>')
    check(wait_for(function() return T.line(buf, 4) == '\tfmt.Println(err)' end, 3000), 'after <Tab> the line reads ' .. vim.inspect(T.line(buf, 4)))
    check(wait_for(function() return #accepts() == 1 end, 3000), 'the agent did not hear nes/accept once the whole suggestion was in: ' .. vim.inspect(accepts()))
    T.out('STEP accept word ok: ' .. vim.inspect(accepts()))
  end
  api.nvim_input('<Esc>')
  sleep(50)

  -- Alternatives.
  type_at_end(5, 'retur')
  if check(wait_for(function() return shown(buf) == 'n nil' end, 8000), 'the first alternative is not shown: ' .. vim.inspect(ghost(buf))) then
    api.nvim_input('<M-]>')
    check(wait_for(function() return shown(buf) == 'n err (2/2)' end, 3000), '<M-]> did not show the second: ' .. vim.inspect(ghost(buf)))
    api.nvim_input('<M-[>')
    check(wait_for(function() return shown(buf) == 'n nil (1/2)' end, 3000), '<M-[> did not show the first again: ' .. vim.inspect(ghost(buf)))
    api.nvim_input('<M-]>')
    check(wait_for(function() return shown(buf) == 'n err (2/2)' end, 3000), '<M-]> did not show the second again')
    local before = #accepts()
    api.nvim_input('<Tab>')
    check(wait_for(function() return T.line(buf, 5) == '\treturn err' end, 3000), 'after <Tab> the line reads ' .. vim.inspect(T.line(buf, 5)))
    check(wait_for(function() return #accepts() == before + 1 end, 3000), 'the agent did not hear nes/accept for the second')
    T.out('STEP alternatives ok: ' .. vim.inspect(accepts()))
  end
  api.nvim_input('<Esc>')
  sleep(50)

  -- A line at a time.
  type_at_end(6, 'defe')
  if check(wait_for(function() return shown(buf) ~= nil end, 8000), 'no ghost text after typing "defe"') then
    T.out('ghost: ' .. vim.inspect(ghost(buf)))
    local before = #accepts()
    api.nvim_input('<M-C-Right>')
    check(wait_for(function() return T.line(buf, 6) == '\tdefer f.Close()' and T.line(buf, 7) == '' end, 3000),
      'after <M-C-Right> the lines read ' .. vim.inspect({ T.line(buf, 6), T.line(buf, 7) }))
    check(#accepts() == before, 'nes/accept after the first line')
    check(wait_for(function() return shown(buf) ~= nil end, 5000), 'the second line is not shown after the first was taken')
    api.nvim_input('<Tab>')
    check(wait_for(function() return T.line(buf, 7) == '\tdefer g.Close()' end, 3000), 'after <Tab> line 7 reads ' .. vim.inspect(T.line(buf, 7)))
    check(wait_for(function() return #accepts() == before + 1 end, 3000), 'the agent did not hear nes/accept once both lines were in')
    T.out('STEP accept line ok')
  end
  api.nvim_input('<Esc>')
  sleep(50)

  -- A part taken, then the user goes elsewhere and gets another suggestion: the agent hears
  -- nes/reject "replaced" for the one partly taken, and no nes/accept.
  api.nvim_buf_set_lines(buf, 7, 7, false, { '\t', '\t' })
  type_at_end(8, 'fmt.Prin')
  if check(wait_for(function() return shown(buf) ~= nil end, 8000), 'no ghost text after typing "fmt.Prin" again') then
    local before = #accepts()
    api.nvim_input('<M-Right>')
    check(wait_for(function() return T.line(buf, 8) == '\tfmt.Println' end, 3000), 'the word was not taken')
    sleep(400) -- the rest is shown again (the bridge answers from the same suggestion)
    local rejects_before = #agent_msgs('nes/reject')
    api.nvim_input('<Esc>')
    sleep(50)
    type_at_end(9, 'retur')
    check(wait_for(function() return shown(buf) ~= nil end, 8000), 'no ghost text on the other line')
    local function new_rejects()
      local out = {}
      for i, m in ipairs(agent_msgs('nes/reject')) do
        if i > rejects_before then
          out[#out + 1] = m.params.reason
        end
      end
      return out
    end
    local replaced = wait_for(function() return vim.tbl_contains(new_rejects(), 'replaced') end, 5000)
    check(not vim.tbl_contains(new_rejects(), 'ignored'), 'a suggestion ended as ignored: ' .. vim.inspect(new_rejects()))
    check(replaced, 'the partly taken suggestion did not end as replaced: ' .. vim.inspect(new_rejects()))
    check(#accepts() == before, 'nes/accept for a suggestion only partly taken')
    T.out('STEP elsewhere ok')
  end
  api.nvim_input('<Esc>')
  sleep(50)
end)
