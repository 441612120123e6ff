-- The driver of BenchmarkNeovimTyping (e2e/nvim_typing_bench_test.go): Neovim 0.12 headless with
-- the plugin installed by vim.pack and set up at its defaults, but for the agent (TYPING_AGENT, a
-- JSON list) and, where the benchmark passes flags to the bridge, `bridge` (TYPING_BRIDGE, a
-- wrapper script; empty: the bridge on the PATH).
--
-- It opens main.go (TYPING_DOC) and types each word of TYPING_WORDS ([{word, mode, warm}]) on a
-- fresh line below line TYPING_ROW: `o`, then a letter every TYPING_KEY_MS ms, each key due at a
-- fixed time from the `o` (timers, nvim_input). The time of the last change is that of the
-- TextChangedI after the last letter; from it, every 2 ms, it looks for the ghost text TYPING_WANT
-- at the end of the line (vim.lsp.inline_completion's extmark), 3 s at most. Then <Esc>, a wait
-- until the fake model server is idle (its state file TYPING_STATE: no request in flight, none
-- started or ended for TYPING_QUIET_MS), `u` (the document as it was), TYPING_QUIET_MS and that
-- wait again. Before each word it writes the word's mode ("stream", "whole") to TYPING_CONTROL for
-- the fake.
--
-- TYPING_OUT, a line a word: WORD <i> <word> <mode> <warm|measured> <start, µs since the epoch>
-- <last change → ghost text, ms; -1 for none>; then DONE. On stdout "NOTE <what>" for a word
-- without ghost text, "FAIL <what>" and exit code 1 when something is not as it must be for the
-- figures to mean anything.

local api, uv = vim.api, vim.uv
local T = dofile(os.getenv('NVIM_TEST_LIB'))

local WORDS = vim.json.decode(os.getenv('TYPING_WORDS'))
local KEY_MS = tonumber(os.getenv('TYPING_KEY_MS'))
local QUIET_MS = tonumber(os.getenv('TYPING_QUIET_MS'))
local ROW = tonumber(os.getenv('TYPING_ROW'))
local WANT = os.getenv('TYPING_WANT')
local CONTROL, STATE = os.getenv('TYPING_CONTROL'), os.getenv('TYPING_STATE')
local results = assert(io.open(os.getenv('TYPING_OUT'), 'w'))

T.install()
local acp = require('acp_lsp_bridge')
local opts = { agent = vim.json.decode(os.getenv('TYPING_AGENT')) }
if (os.getenv('TYPING_BRIDGE') or '') ~= '' then
  opts.bridge = os.getenv('TYPING_BRIDGE')
end
acp.setup(opts)

local co

local function fail(what)
  T.out('FAIL ' .. what)
  vim.cmd('cquit 1')
end

local function sleep(ms)
  vim.defer_fn(function()
    local ok, err = coroutine.resume(co)
    if not ok then
      fail('internal: ' .. tostring(err))
    end
  end, math.max(0, math.floor(ms)))
  coroutine.yield()
end

-- wait_for calls pred every step ms until it is true (true) or timeout ms have passed (false).
local function wait_for(pred, timeout, step)
  local deadline = uv.hrtime() + timeout * 1e6
  while true do
    local ok, v = pcall(pred)
    if ok and v then
      return true
    end
    if uv.hrtime() > deadline then
      return false
    end
    sleep(step or 20)
  end
end

local function wall_us()
  local s, us = uv.gettimeofday()
  return s * 1e6 + us
end

local function write(path, text)
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

-- The ghost text: the virtual text of vim.lsp.inline_completion's extmark in buf.
local ghost = T.ghost

-- idle waits until the fake has had no request in flight, and none start or end, for QUIET_MS.
local function idle(what)
  local ok = wait_for(function()
    local f = io.open(STATE)
    if not f then
      return false
    end
    local s = vim.json.decode(f:read('*a'))
    f:close()
    return s.inflight == 0 and wall_us() - s.last_us >= QUIET_MS * 1000
  end, 20000, 20)
  if not ok then
    fail('the fake server was not idle ' .. what .. ' in 20 s')
  end
end

co = coroutine.create(function()
  write(T.dir .. '/main.go', os.getenv('TYPING_DOC'))
  vim.cmd('edit ' .. vim.fn.fnameescape(T.dir .. '/main.go'))
  local buf = api.nvim_get_current_buf()
  if not wait_for(function() return acp.status() == '✓ next edit' end, 15000) then
    return fail('the bridge is not ready: status() is ' .. vim.inspect(acp.status()))
  end
  if not wait_for(function() return require('vim.lsp._capability').all.inline_completion.active[buf] ~= nil end, 5000) then
    return fail('inline completion is not on in the buffer')
  end
  sleep(300)
  local lines = api.nvim_buf_line_count(buf)
  local changed, changed_line
  api.nvim_create_autocmd('TextChangedI', {
    buffer = buf,
    callback = function()
      changed, changed_line = uv.hrtime(), api.nvim_get_current_line()
    end,
  })
  for i, w in ipairs(WORDS) do
    write(CONTROL, w.mode)
    api.nvim_win_set_cursor(0, { ROW, 0 })
    changed, changed_line = nil, nil
    local start, t0 = wall_us(), uv.hrtime()
    api.nvim_input('o')
    for k = 1, #w.word do
      sleep((t0 + k * KEY_MS * 1e6 - uv.hrtime()) / 1e6)
      api.nvim_input(w.word:sub(k, k))
    end
    if not wait_for(function() return changed_line ~= nil and vim.trim(changed_line) == w.word end, 2000, 1) then
      return fail(('the line reads %s after typing %s'):format(vim.inspect(api.nvim_get_current_line()), w.word))
    end
    local last, seen = changed, nil
    wait_for(function()
      if ghost(buf) == WANT and vim.trim(api.nvim_get_current_line()) == w.word then
        seen = uv.hrtime()
        return true
      end
      return false
    end, 3000, 2)
    if changed ~= last then
      return fail('the line changed after the last key: ' .. vim.inspect(api.nvim_get_current_line()))
    end
    local ms = seen and (seen - last) / 1e6 or -1
    if not seen then
      T.out(('NOTE no ghost text %s after %s (%s): %s'):format(WANT, w.word, w.mode, vim.inspect(ghost(buf))))
    end
    api.nvim_input('<Esc>')
    idle('after ' .. w.word)
    api.nvim_input('u')
    if not wait_for(function() return api.nvim_buf_line_count(buf) == lines end, 3000) then
      return fail(('%d lines after the undo of %s, want %d'):format(api.nvim_buf_line_count(buf), w.word, lines))
    end
    -- What the bridge asks ahead after the undo starts within TYPING_QUIET_MS of it.
    sleep(QUIET_MS)
    idle('after the undo of ' .. w.word)
    results:write(('WORD %d %s %s %s %.0f %.3f\n'):format(i, w.word, w.mode, w.warm and 'warm' or 'measured', start, ms))
  end
  results:write('DONE\n')
  results:close()
  vim.cmd('qa!')
end)

local ok, err = coroutine.resume(co)
if not ok then
  fail('internal: ' .. tostring(err))
end
