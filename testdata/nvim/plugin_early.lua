-- Headless Neovim end-to-end test of the model agent's early answer from a streamed Zeta 2 answer
-- (e2e/nvim_early_test.go), with the plugin installed by vim.pack and set up with agent =
-- EARLY_AGENT against a fake server that holds the rest of its answer after the first changed
-- hunk until this script creates EARLY_RELEASE. The fake writes what it did to EARLY_STATE
-- ({asked, held, released, closed}).
--
-- The user opens p.go (EARLY_DOC) and types "(" at the end of line 2 ("var x = g"); the fake's
-- answer finishes line 2 ("var x = g(100)") and changes line 15. EARLY_MODE:
--   ghost: the ghost text "100)" is shown while the fake holds; <Tab> takes it; then the release.
--   mark:  setup({ display = 'mark' }): the mark of line 2 while the fake holds, <M-n> shows it,
--          <Tab> takes it; the release; the mark of line 15, without a second request; <M-n>
--          jumps there, <M-n> shows it, <Tab> takes it.
--   type:  the ghost text while the fake holds; the user types "y" instead: the fake sees the
--          stream closed, never released.
--   grow:  setup({ display = 'mark' }): the mark of line 2 while the fake holds; the release,
--          with nothing done; <M-n> shows the whole answer (lines 2 to 15, as the bridge was
--          told it grew), without a second request; <Tab> takes it whole.
-- The file is saved at the end.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment: ACP_PLUGIN_REPO, NVIM_TEST_DIR, NVIM_TEST_LIB, EARLY_MODE, EARLY_AGENT (the agent's
-- command, a JSON list), EARLY_DOC, EARLY_STATE, EARLY_RELEASE.
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep = T.check, T.wait_for, T.sleep

local mode = os.getenv('EARLY_MODE')
T.install()
local acp = require('acp_lsp_bridge')
acp.setup({
  agent = vim.json.decode(os.getenv('EARLY_AGENT')),
  display = (mode == 'mark' or mode == 'grow') and 'mark' or 'ghost',
  suggest_timeout = 30000,
})

-- state is what the fake did so far.
local state = T.early_state

local function release()
  local f = assert(io.open(os.getenv('EARLY_RELEASE'), 'w'))
  f:close()
  check(wait_for(function() return state().released end, 10000), 'the fake did not send the rest: ' .. vim.inspect(state()))
  T.out('STEP released ok')
end

-- held checks that the fake holds the rest of its answer: it sent the first hunk, nothing after.
local function held(what)
  local s = state()
  return check(s.held and not s.released and not s.closed, what .. ' while the fake does not hold: ' .. vim.inspect(s))
end

local drawn = T.drawn_mark

local function marked(buf, row, hint)
  return wait_for(function()
    local d = drawn(buf)
    return d.signs[1] == row and d.hints[1] and d.hints[1][2] == hint
  end, 10000)
end

local function shown(buf, preview)
  api.nvim_input('<M-n>')
  return wait_for(function() return drawn(buf).preview[1] == preview end, 3000)
end

T.run(function()
  local buf = T.edit(T.dir .. '/p.go', os.getenv('EARLY_DOC'))
  check(wait_for(function() return acp.status() == '✓ next edit' end, 10000), 'status() is not ready: ' .. acp.status())
  sleep(300)
  T.type_at_end(2, '(')
  check(wait_for(function() return T.line(buf, 2) == 'var x = g(' end, 3000), 'line 2 reads ' .. vim.inspect(T.line(buf, 2)))

  if mode == 'grow' then
    check(marked(buf, 2, '⇥ next edit, here'), 'no mark of line 2 after typing: ' .. vim.inspect(drawn(buf)))
    if held('the mark of line 2 shown') then
      T.out('STEP mark while held ok')
    end
    release()
    -- The bridge follows the answer and tells the plugin once it has more; the mark's request
    -- then gets it. Shown once it has come.
    local whole = wait_for(function()
      if drawn(buf).preview[1] == nil then
        api.nvim_input('<M-n>')
      end
      local p = drawn(buf).preview
      return p[1] == '⇥ var x = g(100)' and p[#p] == '⇥ \tv11 := h(11)'
    end, 10000)
    if check(whole, 'the preview does not show the whole answer: ' .. vim.inspect(drawn(buf))) then
      T.out('STEP whole shown ok')
    end
    check(state().asked == 1, 'the fake was asked again: ' .. vim.inspect(state()))
    api.nvim_input('<Tab>')
    local both = wait_for(function() return T.line(buf, 2) == 'var x = g(100)' and T.line(buf, 15) == '\tv11 := h(11)' end, 3000)
    if check(both, 'after <Tab> lines 2 and 15 read ' .. vim.inspect({ T.line(buf, 2), T.line(buf, 15) })) then
      T.out('STEP accept whole ok')
    end
  elseif mode == 'mark' then
    check(marked(buf, 2, '⇥ next edit, here'), 'no mark of line 2 after typing: ' .. vim.inspect(drawn(buf)))
    if held('the mark of line 2 shown') then
      T.out('STEP mark while held ok')
    end
    check(shown(buf, '⇥ var x = g(100)'), 'no preview of line 2 after <M-n>: ' .. vim.inspect(drawn(buf)))
    if held('the preview of line 2 shown') then
      T.out('STEP shown while held ok')
    end
    api.nvim_input('<Tab>')
    if check(wait_for(function() return T.line(buf, 2) == 'var x = g(100)' end, 3000), 'after <Tab> line 2 reads ' .. vim.inspect(T.line(buf, 2))) then
      T.out('STEP accept first ok')
    end
    release()
    if check(marked(buf, 15, '⇥ next edit, line 15'), 'no mark of line 15 after the first accepted: ' .. vim.inspect(drawn(buf))) then
      T.out('STEP next mark ok')
    end
    api.nvim_input('<M-n>')
    if check(wait_for(function() return api.nvim_win_get_cursor(0)[1] == 15 end, 3000), '<M-n> did not jump to line 15') then
      T.out('STEP jump ok')
    end
    if check(shown(buf, '⇥ \tv11 := h(11)'), 'no preview of line 15 after <M-n>: ' .. vim.inspect(drawn(buf))) then
      T.out('STEP shown ok')
    end
    -- Shown without a second request (once it is taken, the bridge asks for the next at once).
    check(state().asked == 1, 'the fake was asked again: ' .. vim.inspect(state()))
    api.nvim_input('<Tab>')
    if check(wait_for(function() return T.line(buf, 15) == '\tv11 := h(11)' end, 3000), 'after <Tab> line 15 reads ' .. vim.inspect(T.line(buf, 15))) then
      T.out('STEP accept second ok')
    end
  else
    check(wait_for(function() return T.ghost(buf) == '100)' end, 10000), 'no ghost text "100)" after typing: ' .. vim.inspect(T.ghost(buf)))
    if held('the ghost text shown') then
      T.out('STEP ghost text while held ok')
    end
    if mode == 'ghost' then
      api.nvim_input('<Tab>')
      if check(wait_for(function() return T.line(buf, 2) == 'var x = g(100)' end, 3000), 'after <Tab> line 2 reads ' .. vim.inspect(T.line(buf, 2))) then
        T.out('STEP accept ok')
      end
      release()
    else
      api.nvim_input('y')
      check(wait_for(function() return T.line(buf, 2) == 'var x = g(y' end, 3000), 'line 2 reads ' .. vim.inspect(T.line(buf, 2)))
      if check(wait_for(function() return state().closed end, 10000), 'the fake did not see the stream closed: ' .. vim.inspect(state())) then
        T.out('STEP closed ok')
      end
      check(T.ghost(buf) ~= '100)', 'the ghost text "100)" is still shown after typing "y"')
    end
  end
  api.nvim_input('<Esc>')
  sleep(50)
  vim.cmd('silent write')
end)
