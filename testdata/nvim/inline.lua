-- Headless Neovim end-to-end test: Neovim's own LSP client (vim.lsp.inline_completion) talks to
-- acp-lsp-bridge, which runs acp-test-agent. See NOTES.md for the Neovim behaviour relied on.
--
--   nvim --headless --clean -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_test.go):
--   ACP_LSP_BRIDGE            path of the acp-lsp-bridge binary
--   ACP_TEST_AGENT            path of the acp-test-agent binary
--   NVIM_TEST_ENCODING        the only position encoding Neovim offers: utf-8, utf-16 or utf-32
--   NVIM_TEST_AGENT_ENCODING  the agent's --encoding (default: same as NVIM_TEST_ENCODING)
--   NVIM_TEST_AGENT_SYNC      the agent's --sync (default: incremental)
--   NVIM_TEST_DIR             workspace root; the script writes there: rules.json, the case files,
--                             and the bridge and agent read/write bridge.log and agent.log
--
-- Output, one line each on stdout: "CASE <name> ok <suggestion id>" per passing case,
-- "FAIL <case>: <what differed>" per failure, then "ALL PASSED" or "FAILED". Exit code 0 only
-- when every check passed (cquit 1 otherwise, cquit 2 when the watchdog fires).

local api = vim.api

local function out(...)
  io.stdout:write(table.concat(vim.tbl_map(tostring, { ... }), ' '), '\n')
  io.stdout:flush()
end

local function env(name, default)
  local v = os.getenv(name)
  if v == nil or v == '' then
    if default == nil then
      out('FAIL setup: environment variable ' .. name .. ' is not set')
      vim.cmd('cquit 1')
    end
    return default
  end
  return v
end

local bridge = env('ACP_LSP_BRIDGE')
local agent = env('ACP_TEST_AGENT')
local enc = env('NVIM_TEST_ENCODING')
local agent_enc = env('NVIM_TEST_AGENT_ENCODING', enc)
local agent_sync = env('NVIM_TEST_AGENT_SYNC', 'incremental')
local dir = env('NVIM_TEST_DIR')
local agent_log = dir .. '/agent.log'
local bridge_log = dir .. '/bridge.log'
local rules_file = dir .. '/rules.json'

local ACCEPT_COMMAND = 'acp-lsp-bridge.accept'
local SUGGESTION_TIMEOUT = 6000 -- ms; Neovim itself debounces 200 ms
local STEP_TIMEOUT = 3000

-- e + COMBINING ACUTE ACCENT, a + COMBINING CANDRABINDU: two code points, one character.
local E_ACUTE = 'e\204\129'
local A_CANDRA = 'a\204\144'

-- Each case: a file whose lines contain the cursor marker ‸ (removed before use), the keys typed
-- in insert mode at the marker, the agent rule that must fire after typing, the expected item
-- (range from the first occurrence of `range_from` in the typed line, or from the cursor when
-- nil, to the cursor; `insert_text`), and the expected buffer after accepting.
local MARK = '‸'
local cases = {
  {
    name = 'replace-before-cursor',
    file = 'replace.txt',
    lines = { '// 𐐀 日本語 ' .. E_ACUTE, 'let 𐐀 = 日本語 + ' .. E_ACUTE .. ' + f' .. MARK .. '; // 終', 'end 😀' },
    typed = 'o',
    rule = { when = E_ACUTE .. ' + fo;', find = 'fo', replace = 'foo(日本, 😀)' },
    range_from = 'fo;',
    insert_text = 'foo(日本, 😀)',
    expected = {
      '// 𐐀 日本語 ' .. E_ACUTE,
      'let 𐐀 = 日本語 + ' .. E_ACUTE .. ' + foo(日本, 😀); // 終',
      'end 😀',
    },
  },
  {
    name = 'replace-from-far-before-cursor',
    file = 'before.txt',
    lines = { '𐐀 日本語 ' .. E_ACUTE .. ' := ba' .. MARK, '😀' },
    typed = 'r',
    -- The agent's edit starts well before the cursor and ends at it.
    rule = { when = E_ACUTE .. ' := bar', find = '日本語 ' .. E_ACUTE .. ' := bar', replace = 'にほんご ' .. E_ACUTE .. ' := bar(😀)' },
    range_from = '日本語',
    insert_text = 'にほんご ' .. E_ACUTE .. ' := bar(😀)',
    expected = { '𐐀 にほんご ' .. E_ACUTE .. ' := bar(😀)', '😀' },
  },
  {
    name = 'insert-at-cursor',
    file = 'insert.txt',
    lines = { '日本', '😀 ' .. A_CANDRA .. ' 𐐀 = ' .. MARK .. ' // 日本' },
    typed = 'g',
    rule = { when = '𐐀 = g ', find = '', replace = '(日本, 𐐀)' },
    range_from = nil,
    insert_text = '(日本, 𐐀)',
    expected = { '日本', '😀 ' .. A_CANDRA .. ' 𐐀 = g(日本, 𐐀) // 日本' },
  },
}

local failures = {}
local function fail(case, msg)
  table.insert(failures, case .. ': ' .. msg)
  out('FAIL ' .. case .. ': ' .. msg)
end

local function enc_json(v)
  local ok, s = pcall(vim.json.encode, v)
  return ok and s or vim.inspect(v)
end

-- The test runs in a coroutine resumed by timers, so that Neovim's main loop processes the typed
-- keys and stays in insert mode while we wait (vim.wait does not process typeahead).
local co
local function sleep(ms)
  vim.defer_fn(function()
    local ok, err = coroutine.resume(co)
    if not ok then
      out('FAIL internal: ' .. tostring(err))
      vim.cmd('cquit 1')
    end
  end, ms)
  coroutine.yield()
end

local function wait_for(pred, timeout)
  local waited = 0
  while true do
    local ok, v = pcall(pred)
    if ok and v then
      return true
    end
    if waited >= timeout then
      return false
    end
    sleep(20)
    waited = waited + 20
  end
end

local function read_agent_log()
  local f = io.open(agent_log, 'r')
  if not f then
    return {}
  end
  local msgs = {}
  for line in f:lines() do
    local ok, msg = pcall(vim.json.decode, line)
    if ok and type(msg) == 'table' then
      table.insert(msgs, msg)
    end
  end
  f:close()
  return msgs
end

local function lifecycle_messages(id)
  local found = {}
  for _, msg in ipairs(read_agent_log()) do
    if
      (msg.method == 'nes/accept' or msg.method == 'nes/reject')
      and type(msg.params) == 'table'
      and msg.params.id == id
    then
      table.insert(found, msg)
    end
  end
  return found
end

local function write_file(path, lines)
  local f = assert(io.open(path, 'wb'))
  f:write(table.concat(lines, '\n'), '\n')
  f:close()
end

-- Wraps client.request on the instance to record the raw inlineCompletion and executeCommand
-- traffic (the Completor and exec_cmd both call client:request).
local traffic = { inline = {}, exec = {} }
local function record_traffic(client)
  local orig = client.request
  client.request = function(self, method, params, handler, bufnr)
    if method == 'textDocument/inlineCompletion' or method == 'workspace/executeCommand' then
      local rec = { params = vim.deepcopy(params), done = false }
      table.insert(method == 'workspace/executeCommand' and traffic.exec or traffic.inline, rec)
      local h = handler or client:_resolve_handler(method)
      handler = function(err, result, ctx)
        rec.done, rec.err, rec.result = true, err, vim.deepcopy(result)
        if h then
          return h(err, result, ctx)
        end
      end
    end
    return orig(self, method, params, handler, bufnr)
  end
end

-- The window/logMessage texts the bridge sent, through Neovim's own handler (:LspLog shows them).
local logged = {}
local function log_message(err, params, ctx)
  table.insert(logged, type(params) == 'table' and params.message or '')
  return vim.lsp.handlers['window/logMessage'](err, params, ctx)
end

local function items_of(result)
  if type(result) ~= 'table' then
    return {}
  end
  return result.items or result
end

local function run_case(case, client, first)
  local name = case.name
  local failures_before = #failures
  traffic.inline, traffic.exec = {}, {}

  -- Build the file without the cursor marker and remember where the marker was.
  local lines, cur_row, cur_col = {}, nil, nil
  for i, l in ipairs(case.lines) do
    local s = l:find(MARK, 1, true)
    if s then
      cur_row, cur_col = i, s - 1
      l = l:sub(1, s - 1) .. l:sub(s + #MARK)
    end
    lines[i] = l
  end
  local path = dir .. '/' .. case.file
  write_file(path, lines)

  api.nvim_input('<Esc>')
  sleep(20)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()

  local attached = false
  api.nvim_create_autocmd('LspAttach', {
    buffer = buf,
    once = true,
    callback = function()
      attached = true
    end,
  })
  if first then
    local id = client()
    if not id then
      fail(name, 'vim.lsp.start did not return a client id')
      return nil
    end
    client = vim.lsp.get_client_by_id(id)
    record_traffic(client)
  else
    vim.lsp.buf_attach_client(buf, client.id)
  end
  if not wait_for(function()
    return attached
  end, 10000) then
    local stopped = type(client) == 'table' and client:is_stopped()
    fail(
      name,
      stopped and 'the bridge process exited (see the LSP log for its stderr)'
        or 'the client did not attach within 10 s (no initialize answer?)'
    )
    return client
  end
  sleep(50) -- the Completor is created in a vim.schedule after LspAttach (client.lua:1180)

  if first then
    -- The negotiated encoding.
    local caps = client.server_capabilities or {}
    if client.offset_encoding ~= enc then
      fail(
        name,
        ('offered only positionEncodings={%q}; server answered positionEncoding=%s, client.offset_encoding=%s'):format(
          enc,
          tostring(caps.positionEncoding),
          client.offset_encoding
        )
      )
    end
    if not caps.inlineCompletionProvider then
      fail(name, 'server capabilities lack inlineCompletionProvider: ' .. enc_json(caps))
    end
    local cmds = vim.tbl_get(caps, 'executeCommandProvider', 'commands') or {}
    if not vim.list_contains(cmds, ACCEPT_COMMAND) then
      fail(name, 'executeCommandProvider.commands lacks ' .. ACCEPT_COMMAND .. ': ' .. enc_json(cmds))
    end
    local change = vim.tbl_get(caps, 'textDocumentSync', 'change')
    if change ~= 2 then
      fail(name, 'textDocumentSync.change = ' .. tostring(change) .. ', want 2 (incremental)')
    end
    out(('INFO %s: positionEncoding=%s offset_encoding=%s'):format(name, tostring(caps.positionEncoding), client.offset_encoding))

    -- The bridge answers inline requests with nothing until it says the agent is ready
    -- (window/logMessage "acp-lsp-bridge: NAME is ready (...)"): a user types once it is.
    if not wait_for(function()
      for _, m in ipairs(logged) do
        if m:find(' is ready (', 1, true) then
          return true
        end
      end
    end, 10000) then
      fail(name, 'the bridge never said the agent is ready (window/logMessage within 10 s): ' .. enc_json(logged))
      return client
    end
  end

  -- Type in insert mode at the marker.
  local keys
  if cur_col >= #lines[cur_row] then
    api.nvim_win_set_cursor(0, { cur_row, 0 })
    keys = 'A' .. case.typed
  else
    api.nvim_win_set_cursor(0, { cur_row, cur_col })
    keys = 'i' .. case.typed
  end
  api.nvim_input(keys)
  local typed_line = lines[cur_row]:sub(1, cur_col) .. case.typed .. lines[cur_row]:sub(cur_col + 1)
  if not wait_for(function()
    return api.nvim_get_current_line() == typed_line and api.nvim_get_mode().mode == 'i'
  end, STEP_TIMEOUT) then
    fail(name, ('typing %q failed: line %q, mode %s'):format(keys, api.nvim_get_current_line(), api.nvim_get_mode().mode))
    return client
  end
  local cursor_byte = cur_col + #case.typed
  local cursor_char = vim.str_utfindex(typed_line, enc, cursor_byte, false)

  -- Wait for the suggestion to be displayed (an extmark in Neovim's namespace) and for the raw
  -- response that carries it.
  local ns = api.nvim_get_namespaces()['nvim.lsp.inline_completion']
  local raw
  local shown = wait_for(function()
    raw = nil
    for i = #traffic.inline, 1, -1 do
      local rec = traffic.inline[i]
      if rec.done and #items_of(rec.result) > 0 then
        raw = rec
        break
      end
    end
    return raw and #api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}) > 0
  end, SUGGESTION_TIMEOUT)
  if not shown then
    local reqs = {}
    for _, rec in ipairs(traffic.inline) do
      table.insert(reqs, enc_json({ params = rec.params, done = rec.done, err = rec.err, result = rec.result }))
    end
    fail(
      name,
      ('no inline completion shown within %d ms after typing (line %q, cursor %d:%d %s, mode %s); textDocument/inlineCompletion traffic: %s'):format(
        SUGGESTION_TIMEOUT,
        typed_line,
        cur_row - 1,
        cursor_char,
        enc,
        api.nvim_get_mode().mode,
        #reqs > 0 and table.concat(reqs, ' | ') or '(no request sent)'
      )
    )
    return client
  end

  -- The raw item: one line, the cursor's, containing the cursor; exact range and text.
  local item = items_of(raw.result)[1]
  out(('INFO %s: request %s -> item %s'):format(name, enc_json(raw.params.position), enc_json(item)))
  local virt = api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })
  out(('INFO %s: ghost text %s'):format(name, enc_json(virt[1] and virt[1][4].virt_text)))
  local row = cur_row - 1
  local want_start_byte = case.range_from and (typed_line:find(case.range_from, 1, true) - 1) or cursor_byte
  local want_range = {
    start = { line = row, character = vim.str_utfindex(typed_line, enc, want_start_byte, false) },
    ['end'] = { line = row, character = cursor_char },
  }
  if raw.params.position.line ~= row or raw.params.position.character ~= cursor_char then
    fail(name, ('Neovim requested at %s, expected {line=%d, character=%d}'):format(enc_json(raw.params.position), row, cursor_char))
  end
  local r = item.range
  if type(r) ~= 'table' then
    fail(name, 'item has no range: ' .. enc_json(item))
  elseif not vim.deep_equal(r, want_range) then
    fail(
      name,
      ('item range %s, want %s (%s; line %q, cursor after byte %d)'):format(enc_json(r), enc_json(want_range), enc, typed_line, cursor_byte)
    )
  end
  if item.insertText ~= case.insert_text then
    fail(name, ('item insertText %s, want %s'):format(enc_json(item.insertText), enc_json(case.insert_text)))
  end
  local cmd = item.command
  local sid = type(cmd) == 'table' and type(cmd.arguments) == 'table' and cmd.arguments[1] or nil
  if type(cmd) ~= 'table' or cmd.command ~= ACCEPT_COMMAND or type(sid) ~= 'string' or sid == '' then
    fail(name, ('item command %s, want {command=%q, arguments={<suggestion id>}}'):format(enc_json(cmd), ACCEPT_COMMAND))
  end

  -- Accept it the way a user's mapping does, while still in insert mode.
  if api.nvim_get_mode().mode ~= 'i' then
    fail(name, 'left insert mode before accepting: ' .. api.nvim_get_mode().mode)
  end
  local accepted
  local got = vim.lsp.inline_completion.get({
    on_accept = function(it)
      accepted = it
      return it
    end,
  })
  if not got then
    fail(name, 'vim.lsp.inline_completion.get() returned false (no current item)')
    return client
  end
  if not wait_for(function()
    return accepted ~= nil
  end, STEP_TIMEOUT) then
    fail(name, 'the accept callback never ran')
    return client
  end
  sleep(20)

  local now = api.nvim_buf_get_lines(buf, 0, -1, true)
  if not vim.deep_equal(now, case.expected) then
    fail(name, ('buffer after accept:\n  got  %s\n  want %s'):format(enc_json(now), enc_json(case.expected)))
  end

  -- Neovim sends workspace/executeCommand for the item's command; the bridge answers it and
  -- sends nes/accept with the same id to the agent.
  if sid then
    if not wait_for(function()
      return traffic.exec[1] and traffic.exec[1].done
    end, STEP_TIMEOUT) then
      fail(name, 'workspace/executeCommand was not answered: ' .. enc_json(traffic.exec))
    else
      local ex = traffic.exec[1]
      if ex.params.command ~= ACCEPT_COMMAND or not vim.deep_equal(ex.params.arguments, { sid }) then
        fail(name, 'workspace/executeCommand params ' .. enc_json(ex.params))
      end
      if ex.err then
        fail(name, 'workspace/executeCommand answered an error: ' .. enc_json(ex.err))
      end
    end
    local seen = wait_for(function()
      for _, m in ipairs(lifecycle_messages(sid)) do
        if m.method == 'nes/accept' then
          return true
        end
      end
    end, STEP_TIMEOUT)
    sleep(300) -- let a wrong nes/reject for the same id arrive, if the bridge sends one
    local lc = lifecycle_messages(sid)
    if not seen then
      fail(name, ('agent log has no nes/accept for id %q; lifecycle messages for it: %s'):format(sid, enc_json(lc)))
    elseif #lc ~= 1 then
      fail(name, ('suggestion %q must end exactly once (nes/accept); agent got: %s'):format(sid, enc_json(lc)))
    end
  end
  api.nvim_input('<Esc>')
  sleep(20)
  if #failures == failures_before then
    out(('CASE %s ok %s'):format(name, tostring(sid)))
  end
  return client
end

local function main()
  local rules = {}
  for _, c in ipairs(cases) do
    table.insert(rules, c.rule)
  end
  write_file(rules_file, { vim.json.encode(rules) })
  vim.o.showmode = false -- headless Neovim would print "-- INSERT --" into our output
  vim.lsp.log.set_level('debug') -- the LSP traffic goes to vim.lsp.log.get_filename()
  out('INFO lsp log: ' .. vim.lsp.log.get_filename())
  vim.lsp.inline_completion.enable()

  local start = function()
    return vim.lsp.start({
      name = 'acp-lsp-bridge',
      cmd = {
        bridge,
        '--log-file',
        bridge_log,
        '--log-level',
        'debug',
        '--',
        agent,
        '--encoding',
        agent_enc,
        '--sync',
        agent_sync,
        '--log',
        agent_log,
        '--rules',
        rules_file,
      },
      root_dir = dir,
      -- Offer exactly one encoding (lists replace the defaults, see NOTES.md).
      capabilities = { general = { positionEncodings = { enc } } },
      handlers = { ['window/logMessage'] = log_message },
      -- Same process group as nvim, so the Go test can end everything on timeout.
      detached = false,
    }, { bufnr = api.nvim_get_current_buf() })
  end

  local client = start
  for i, case in ipairs(cases) do
    local ok, res = pcall(run_case, case, client, i == 1)
    if not ok then
      fail(case.name, 'error: ' .. tostring(res))
      if i == 1 then
        break
      end
    elseif type(res) == 'table' then
      client = res
      if not client.initialized then
        break -- the bridge never answered initialize; the other cases cannot run
      end
    elseif i == 1 then
      break -- no client, nothing else can run
    end
  end

  -- Stop the client; the bridge should answer shutdown and exit.
  if type(client) == 'table' then
    client:stop()
    if not wait_for(function()
      return client:is_stopped() and client.rpc.is_closing()
    end, 2000) then
      out('INFO the bridge had not exited 2 s after shutdown/exit')
    end
  end

  if #failures == 0 then
    out('ALL PASSED')
    vim.cmd('qa!')
  else
    out('FAILED (' .. #failures .. ')')
    vim.cmd('cquit 1')
  end
end

vim.defer_fn(function()
  out('FAIL watchdog: the test did not finish in 25 s')
  vim.cmd('cquit 2')
end, 25000)

co = coroutine.create(function()
  local ok, err = pcall(main)
  if not ok then
    out('FAIL internal: ' .. tostring(err))
    vim.cmd('cquit 1')
  end
end)
local ok, err = coroutine.resume(co)
if not ok then
  out('FAIL internal: ' .. tostring(err))
  vim.cmd('cquit 1')
end
