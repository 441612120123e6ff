-- Headless Neovim end-to-end test of the plugin's quieter display, installed with vim.pack and set
-- up with require('acp_lsp_bridge').setup({ display = 'mark', agent = <the test agent> }), the
-- bridge found on the PATH. The agent always suggests the same edit, two lines below where the user
-- types ("// todo" → "// done"). As the user types, no ghost text appears: a sign marks the
-- suggestion's line and an end-of-line hint says "⇥ next edit, line 6". <M-n> jumps there (the hint
-- now says "here"); <M-n> again shows the lines as they would read, below; <Tab> takes it: the
-- line reads "// done", the cursor is after it, and the agent hears nes/accept.
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

local mark = dofile(vim.fs.dirname(os.getenv('NVIM_TEST_LIB')) .. '/mark_lib.lua')(T)
T.install()
require('acp_lsp_bridge').setup({
  display = 'mark',
  agent = mark.agent,
})

-- What the plugin drew: its sign lines, its end-of-line hints, its preview lines.
local drawn = T.drawn_mark

-- Neovim's own ghost text (vim.lsp.inline_completion's namespace).
local function ghost_shown(buf)
  local ns = api.nvim_get_namespaces()['nvim.lsp.inline_completion']
  return ns ~= nil and #api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}) > 0
end

T.run(function()
  local buf = T.edit(mark.path, mark.text)
  check(wait_for(function() return #agent_msgs('document/didOpen') > 0 end, 10000), 'the agent never got the document')
  sleep(300)

  T.type_at_end(5, 'y')
  local marked = wait_for(function()
    local d = drawn(buf)
    return d.signs[1] == 6 and d.hints[1] and d.hints[1][1] == 5 and d.hints[1][2] == '⇥ next edit, line 6'
  end, 8000)
  check(marked, 'no mark after typing: ' .. vim.inspect(drawn(buf)))
  sleep(500)
  check(not ghost_shown(buf), 'ghost text shown in the quieter display')
  check(#agent_msgs('nes/suggest') >= 1, 'the agent was never asked')
  T.out('STEP mark ok: ' .. vim.inspect(drawn(buf)))

  api.nvim_input('<M-n>')
  check(wait_for(function() return api.nvim_win_get_cursor(0)[1] == 6 end, 3000), '<M-n> did not jump to line 6')
  check(wait_for(function()
    local h = drawn(buf).hints[1]
    return h and h[1] == 6 and h[2] == '⇥ next edit, here'
  end, 3000), 'the hint after the jump: ' .. vim.inspect(drawn(buf)))
  T.out('STEP jump ok')

  api.nvim_input('<M-n>')
  check(wait_for(function() return drawn(buf).preview[1] == '⇥ \t// done' end, 3000), 'no preview after <M-n>: ' .. vim.inspect(drawn(buf)))
  T.out('STEP shown ok')

  api.nvim_input('<Tab>')
  check(wait_for(function() return T.line(buf, 6) == '\t// done' end, 3000), 'after <Tab> line 6 reads ' .. vim.inspect(T.line(buf, 6)))
  -- The cursor after the edit, as after ghost text: where the bridge asks for the next one.
  local cur = api.nvim_win_get_cursor(0)
  check(cur[1] == 6 and cur[2] == #'\t// done', 'the cursor after <Tab>: ' .. vim.inspect(cur))
  check(wait_for(function() return #agent_msgs('nes/accept') == 1 end, 3000), 'the agent did not hear nes/accept')
  T.out('STEP accept ok: ' .. vim.inspect(agent_msgs('nes/accept')[1]))
  api.nvim_input('<Esc>')
  sleep(50)
end)
