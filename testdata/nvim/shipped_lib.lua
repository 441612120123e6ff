-- Helpers of the headless Neovim scripts run by e2e/nvim_plugin_test.go (the plugin, installed with
-- vim.pack) and e2e/nvim_plugins_test.go (sidekick.nvim, copilot-lsp.nvim). The test body runs in
-- a coroutine resumed by timers, so that Neovim's main loop keeps running, and handles the typed
-- keys, while it waits.
--
--   local T = dofile(vim.env.NVIM_TEST_LIB)
--   T.run(function() ... end)   -- prints ALL PASSED and quits, or cquit 1 after a failed check
--
-- Output: what the body prints, "FAIL <what>" per failed check, then "ALL PASSED"; exit code 0
-- only then (cquit 2 when the 40 s watchdog fires).

local api = vim.api
local T = {}

T.dir = os.getenv('NVIM_TEST_DIR')
T.agent_log = T.dir .. '/agent.log'

function T.out(...)
  io.stdout:write(table.concat(vim.tbl_map(tostring, { ... }), ' '), '\n')
  io.stdout:flush()
end

local co
function T.sleep(ms)
  vim.defer_fn(function()
    local ok, err = coroutine.resume(co)
    if not ok then
      T.out('FAIL internal: ' .. tostring(err))
      vim.cmd('cquit 1')
    end
  end, ms)
  coroutine.yield()
end

function T.wait_for(pred, timeout)
  for _ = 0, timeout, 20 do
    local ok, v = pcall(pred)
    if ok and v then
      return true
    end
    T.sleep(20)
  end
  return false
end

T.failed = false
function T.check(ok, what)
  if not ok then
    T.failed = true
    T.out('FAIL ' .. what)
  end
  return ok
end

-- The messages of method the agent logged in T.agent_log, a JSON object a line with its method
-- (acp-test-agent --log T.agent_log; session-agent.mjs's SESSION_AGENT_LOG).
function T.agent_msgs(method)
  local found = {}
  local fh = io.open(T.agent_log, 'r')
  if not fh then
    return found
  end
  for line in fh:lines() do
    local ok, msg = pcall(vim.json.decode, line)
    if ok and type(msg) == 'table' and msg.method == method then
      table.insert(found, msg)
    end
  end
  fh:close()
  return found
end

-- T.early_state is what the fake streaming server of e2e/nvim_early_test.go did so far (its
-- state file EARLY_STATE: {asked, held, released, closed}); {} before it wrote any.
function T.early_state()
  local f = io.open(os.getenv('EARLY_STATE'))
  if not f then
    return {}
  end
  local s = f:read('*a')
  f:close()
  local ok, v = pcall(vim.json.decode, s)
  return ok and v or {}
end

-- T.record_notify makes vim.notify also keep what the user is told, in order, in the list it
-- returns.
function T.record_notify()
  local said = {}
  local notify = vim.notify
  vim.notify = function(msg, level, o)
    said[#said + 1] = msg
    return notify(msg, level, o)
  end
  return said
end

-- T.answer_questions answers every question Neovim asks with inputlist() (how it asks the
-- question of window/showMessageRequest) with choice, as the user would pick it; it returns a
-- function that gives the last question asked (nil before any).
function T.answer_questions(choice)
  local last
  vim.fn.inputlist = function(items)
    last = items
    return choice
  end
  return function() return last end
end

-- The ghost text shown in buf: vim.lsp.inline_completion draws it as virtual text.
function T.ghost(buf)
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
    local d = m[4]
    if d and (d.virt_text or d.virt_lines) then
      local parts = {}
      for _, chunk in ipairs(d.virt_text or {}) do
        table.insert(parts, chunk[1])
      end
      return table.concat(parts)
    end
  end
  return nil
end

-- edit opens path (written with text first) and waits until the acp client is attached.
function T.edit(path, text)
  local fw = assert(io.open(path, 'w'))
  fw:write(text)
  fw:close()
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  if not T.check(T.wait_for(function() return #vim.lsp.get_clients({ bufnr = buf, name = 'acp' }) > 0 end, 10000), 'the acp client did not attach') then
    vim.cmd('cquit 1')
  end
  return buf
end

-- install installs the plugin as a user of vim.pack does, from the git repository
-- ACP_PLUGIN_REPO (the working tree's plugin files, committed there by the Go test): vim.pack
-- clones it into stdpath('data') and adds it to the runtimepath. confirm = false: the first install
-- would otherwise ask, and nobody answers a headless Neovim.
-- T.scripted_agent writes the test agent's rules (a JSON text) to rules.json in the workspace and
-- returns the agent's command: the scripted test agent with those rules, logging to T.agent_log,
-- with extra arguments after.
function T.scripted_agent(rules, ...)
  local f = assert(io.open(T.dir .. '/rules.json', 'w'))
  f:write(rules)
  f:close()
  return { os.getenv('ACP_TEST_AGENT'), '--rules', T.dir .. '/rules.json', '--log', T.agent_log, ... }
end

-- T.start_bridge starts the built bridge (ACP_LSP_BRIDGE) for buf with the agent command after
-- "--", logging at debug level to bridge.log in the workspace, and waits until it says the agent
-- is ready. It returns the client id, or nil after a failed check.
function T.start_bridge(buf, agent)
  local ready = false
  local cmd = { os.getenv('ACP_LSP_BRIDGE'), '--log-file', T.dir .. '/bridge.log', '--log-level', 'debug', '--' }
  vim.list_extend(cmd, agent)
  local id = vim.lsp.start({
    name = 'acp',
    cmd = cmd,
    root_dir = T.dir,
    handlers = {
      ['window/logMessage'] = function(_, p)
        ready = ready or p.message:find(' is ready (', 1, true) ~= nil
      end,
    },
    detached = false,
  }, { bufnr = buf })
  if not T.check(T.wait_for(function() return ready end, 10000), 'the bridge never said the agent is ready') then
    return nil
  end
  return id
end

-- T.type_at_end moves the cursor to the end of row (1-based) and types text there (A, then text).
function T.type_at_end(row, text)
  vim.api.nvim_win_set_cursor(0, { row, #vim.api.nvim_buf_get_lines(0, row - 1, row, false)[1] })
  vim.api.nvim_input('A' .. text)
end

function T.install()
  vim.pack.add({ { src = 'file://' .. os.getenv('ACP_PLUGIN_REPO'), name = 'acp-lsp-bridge' } }, { confirm = false })
end

-- The text of line row (1-based) of buf.
function T.line(buf, row)
  return api.nvim_buf_get_lines(buf, row - 1, row, false)[1]
end

-- guide runs the Lua blocks of the guide ACP_GUIDE as a user copies them, the bridge's path
-- ('acp-lsp-bridge',) changed to ACP_LSP_BRIDGE; it checks that there are want blocks.
function T.guide(want)
  local text = assert(io.open(os.getenv('ACP_GUIDE'))):read('*a')
  local n = 0
  for code in text:gmatch('```lua\n(.-)```') do
    code = code:gsub("'acp%-lsp%-bridge',", function() return vim.inspect(os.getenv('ACP_LSP_BRIDGE')) .. ',' end)
    assert(load(code, os.getenv('ACP_GUIDE')))()
    n = n + 1
  end
  T.check(n == want, 'the guide has ' .. n .. ' Lua blocks, want ' .. want)
end

-- The ends the bridge sent the agent, from its --trace file ACP_TRACE: {method, id, reason}.
function T.ends()
  local out = {}
  for l in io.lines(os.getenv('ACP_TRACE')) do
    local ok, rec = pcall(vim.json.decode, l)
    if ok and rec.dir == 'bridge→agent' and (rec.message.method == 'nes/accept' or rec.message.method == 'nes/reject') then
      table.insert(out, { rec.message.method, rec.message.params.id, rec.message.params.reason })
    end
  end
  return out
end

-- check_ends checks that each id ended once, and that the ids of want ended as said there
-- ('nes/accept', 'nes/reject rejected', ...).
function T.check_ends(want)
  local got, verdict = T.ends(), {}
  for _, e in ipairs(got) do
    T.check(not verdict[e[2]], e[2] .. ' ended twice: ' .. vim.inspect(got))
    verdict[e[2]] = e[1] .. (e[3] and (' ' .. e[3]) or '')
  end
  for id, v in pairs(want) do
    T.check(verdict[id] == v, id .. ' ended as ' .. tostring(verdict[id]) .. ', want ' .. v .. ': ' .. vim.inspect(got))
  end
end

-- open_file writes text to path, opens it and waits until the LSP client name is attached.
function T.open_file(path, text, name)
  local fw = assert(io.open(path, 'w'))
  fw:write(text)
  fw:close()
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  T.check(T.wait_for(function() return #vim.lsp.get_clients({ bufnr = buf, name = name }) > 0 end, 10000), name .. ' did not attach')
  return buf
end

-- rename_sum opens total.go (T.total_go) with the LSP client name attached, gives the built-in
-- agent time to start, and renames sum to acc where it is declared (line 5), as the user would.
function T.rename_sum(name)
  local buf = T.open_file(T.dir .. '/total.go', T.total_go, name)
  T.sleep(500)
  api.nvim_win_set_cursor(0, { 5, 1 })
  api.nvim_input('cwacc<Esc>')
  return buf
end

-- tab_tab presses <Tab> twice, as the guides map it: the first jumps to the edit on line 7, the
-- second applies the rename there.
function T.tab_tab(buf)
  api.nvim_input('<Tab>')
  T.check(T.wait_for(function() return api.nvim_win_get_cursor(0)[1] == 7 end, 3000), 'the first <Tab> did not jump to line 7')
  T.out('STEP jump ok')
  api.nvim_input('<Tab>')
  T.check(T.wait_for(function() return T.line(buf, 7) == '\t\t/*é*/ acc += p // 😀' end, 3000),
    'after <Tab><Tab> line 7 reads ' .. vim.inspect(T.line(buf, 7)))
end

-- accept does what accepts the shown suggestion (act: a key typed, or a call), checks that line
-- row of buf then reads want (how names act in the failure), and writes STEP accept ok.
function T.accept(buf, row, want, how, act)
  act()
  T.check(T.wait_for(function() return T.line(buf, row) == want end, 3000),
    'after ' .. how .. ' line ' .. row .. ' reads ' .. vim.inspect(T.line(buf, row)))
  T.out('STEP accept ok')
end

-- ghost_after_rename opens sum.go with the acp client attached, renames sum to acc where it is
-- declared (line 5) as the user would, goes to the sum of line 7 and enters insert mode there; it
-- returns the buffer and whether the built-in agent's ghost text "acc" appeared over that sum.
function T.ghost_after_rename()
  local buf = T.edit(T.dir .. '/sum.go', table.concat({
    'package main',
    '',
    '// Total adds the prices, in €.',
    'func Total(prices []int) int {',
    '\tsum := 0',
    '\tfor _, p := range prices {',
    '\t\tsum += p',
    '\t}',
    '\treturn sum',
    '}',
    '',
  }, '\n'))
  -- vim.lsp.inline_completion sets the buffer up in a vim.schedule after LspAttach, and the
  -- built-in agent starts in the background; keys typed before that ask nothing.
  T.sleep(300)
  api.nvim_win_set_cursor(0, { 5, 1 })
  api.nvim_input('cwacc<Esc>')
  T.check(T.wait_for(function() return T.line(buf, 5) == '\tacc := 0' end, 3000), 'line 5 reads ' .. vim.inspect(T.line(buf, 5)))
  T.sleep(300)
  api.nvim_input('jj^i')
  local shown = T.wait_for(function() return T.ghost(buf) == 'acc' end, 10000)
  T.check(shown, 'no ghost text "acc" on line 7 after the rename on line 5: ' .. vim.inspect(T.ghost(buf)))
  return buf, shown
end

-- The Go function the plugin tests edit, with non-ASCII text before and after names.
T.total_go = table.concat({
  'package main',
  '',
  '// Total adds the prices, in €.',
  'func Total(prices []int) int {',
  '\tsum := 0 // 日本',
  '\tfor _, p := range prices {',
  '\t\t/*é*/ sum += p // 😀',
  '\t}',
  '\treturn sum',
  '}',
  '',
}, '\n')

function T.run(body)
  co = coroutine.create(function()
    body()
    if T.failed then
      vim.cmd('cquit 1')
    end
    T.out('ALL PASSED')
    vim.cmd('qa!')
  end)
  vim.defer_fn(function()
    T.out('FAIL watchdog: the test did not finish in 40 s')
    vim.cmd('cquit 2')
  end, 40000)
  local ok, err = coroutine.resume(co)
  if not ok then
    T.out('FAIL internal: ' .. tostring(err))
    vim.cmd('cquit 1')
  end
end

-- What the plugin's quieter display (display = 'mark') drew in buf: its sign lines, its
-- end-of-line hints, its preview lines.
function T.drawn_mark(buf)
  local out = { signs = {}, hints = {}, preview = {} }
  local ns = vim.api.nvim_get_namespaces()['acp_lsp_bridge_mark']
  if not ns then
    return out
  end
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local row, d = m[2], m[4]
    if d.sign_text then
      out.signs[#out.signs + 1] = row + 1
    end
    for _, chunk in ipairs(d.virt_text or {}) do
      out.hints[#out.hints + 1] = { row + 1, chunk[1] }
    end
    for _, l in ipairs(d.virt_lines or {}) do
      out.preview[#out.preview + 1] = l[1][1]
    end
  end
  return out
end

return T
