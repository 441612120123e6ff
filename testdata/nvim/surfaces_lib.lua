-- Shared helpers of the headless Neovim surface tests (surfaces_*.lua, run by
-- e2e/nvim_surfaces_test.go). Same technique as inline.lua (see NOTES.md): the test runs in a
-- coroutine resumed by timers, so Neovim's main loop keeps running while it waits.
--
-- Environment (set by e2e/nvim_surfaces_test.go):
--   ACP_LSP_BRIDGE            path of the acp-lsp-bridge binary
--   NVIM_TEST_AGENT_CMD       JSON array: the agent command (acp-test-agent, or the scripted agent)
--   NVIM_TEST_ENCODING        the only position encoding Neovim offers
--   NVIM_TEST_AGENT_ENCODING  the agent's --encoding
--   NVIM_TEST_DIR             workspace root; bridge.log and agent.log are written there
--
-- Output: "CASE <name> ok <suggestion id>" per accepted suggestion whose case passed, "FAIL <case>:
-- <what differed>" per failure, "INFO ..." lines, then "ALL PASSED" or "FAILED (n)". Exit code 0
-- only when every check passed (cquit 1 otherwise, cquit 2 when the watchdog fires).

local api = vim.api
local T = {}

function T.out(...)
  io.stdout:write(table.concat(vim.tbl_map(tostring, { ... }), ' '), '\n')
  io.stdout:flush()
end

function T.env(name, default)
  local v = os.getenv(name)
  if v == nil or v == '' then
    if default == nil then
      T.out('FAIL setup: environment variable ' .. name .. ' is not set')
      vim.cmd('cquit 1')
    end
    return default
  end
  return v
end

T.bridge = T.env('ACP_LSP_BRIDGE')
T.agent_cmd = vim.json.decode(T.env('NVIM_TEST_AGENT_CMD'))
T.enc = T.env('NVIM_TEST_ENCODING')
T.agent_enc = T.env('NVIM_TEST_AGENT_ENCODING', T.enc)
T.dir = T.env('NVIM_TEST_DIR')
T.agent_log = T.dir .. '/agent.log'
T.bridge_log = T.dir .. '/bridge.log'

T.ACCEPT = 'acp-lsp-bridge.accept'
T.REJECT = 'acp-lsp-bridge.reject'
T.STEP_TIMEOUT = 5000

-- e + COMBINING ACUTE ACCENT: two code points, one character.
T.E_ACUTE = 'e\204\129'

T.failures = {}
function T.fail(case, msg)
  table.insert(T.failures, case .. ': ' .. msg)
  T.out('FAIL ' .. case .. ': ' .. msg)
end

function T.json(v)
  local ok, s = pcall(vim.json.encode, v)
  return ok and s or vim.inspect(v)
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
  local waited = 0
  while true do
    local ok, v = pcall(pred)
    if ok and v then
      return true
    end
    if waited >= (timeout or T.STEP_TIMEOUT) then
      return false
    end
    T.sleep(20)
    waited = waited + 20
  end
end

function T.write_file(path, lines)
  local f = assert(io.open(path, 'wb'))
  f:write(table.concat(lines, '\n'), '\n')
  f:close()
end

function T.read_lines(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return vim.split(s:gsub('\n$', ''), '\n', { plain = true })
end

function T.read_agent_log()
  local f = io.open(T.agent_log, 'r')
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

-- The nes/accept and nes/reject messages the agent received for an id.
function T.lifecycle(id)
  local found = {}
  for _, msg in ipairs(T.read_agent_log()) do
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

-- Waits for the agent's nes/accept of id, then checks it was the only lifecycle message for it.
function T.expect_accept(case, id)
  local seen = T.wait_for(function()
    for _, m in ipairs(T.lifecycle(id)) do
      if m.method == 'nes/accept' then
        return true
      end
    end
  end)
  T.sleep(300) -- let a wrong nes/reject for the same id arrive, if the bridge sends one
  local lc = T.lifecycle(id)
  if not seen then
    T.fail(case, ('agent log has no nes/accept for id %q; lifecycle messages for it: %s'):format(id, T.json(lc)))
  elseif #lc ~= 1 then
    T.fail(case, ('suggestion %q must end exactly once (nes/accept); agent got: %s'):format(id, T.json(lc)))
  end
end

-- Waits for the agent's nes/reject of id with reason, then checks it was the only lifecycle
-- message for it.
function T.expect_reject(case, id, reason)
  local seen = T.wait_for(function()
    for _, m in ipairs(T.lifecycle(id)) do
      if m.method == 'nes/reject' then
        return true
      end
    end
  end)
  T.sleep(300)
  local lc = T.lifecycle(id)
  if not seen then
    T.fail(case, ('agent log has no nes/reject for id %q; lifecycle messages for it: %s'):format(id, T.json(lc)))
  elseif #lc ~= 1 or lc[1].params.reason ~= reason then
    T.fail(case, ('suggestion %q must end exactly once, nes/reject reason %q; agent got: %s'):format(id, reason, T.json(lc)))
  end
end

-- Records requests (params, answer) of the given methods sent through client:request, and
-- server→client requests (window/showDocument) by wrapping the client's handler.
function T.record(client, methods)
  local traffic = {}
  for _, m in ipairs(methods) do
    traffic[m] = {}
  end
  local orig = client.request
  client.request = function(self, method, params, handler, bufnr)
    if traffic[method] then
      local rec = { params = vim.deepcopy(params), done = false }
      table.insert(traffic[method], rec)
      local h = handler or client:_resolve_handler(method)
      handler = function(err, result, ctx)
        rec.done, rec.err, rec.result, rec.ctx = true, err, vim.deepcopy(result), ctx
        if h then
          return h(err, result, ctx)
        end
      end
    end
    return orig(self, method, params, handler, bufnr)
  end
  return traffic
end

-- The window/logMessage texts each client received (by client id), through Neovim's own handler.
T.logged = {}
local function log_message(err, params, ctx)
  local list = T.logged[ctx.client_id] or {}
  T.logged[ctx.client_id] = list
  table.insert(list, type(params) == 'table' and params.message or '')
  return vim.lsp.handlers['window/logMessage'](err, params, ctx)
end

-- Waits for the bridge's word that the agent is ready, the window/logMessage "acp-lsp-bridge: NAME
-- is ready (...)" that a user reads in :LspLog: the bridge answers requests before it with nothing.
function T.wait_ready(case, client)
  local ready = T.wait_for(function()
    for _, m in ipairs(T.logged[client.id] or {}) do
      if m:find(' is ready (', 1, true) then
        return true
      end
    end
  end, 10000)
  if not ready then
    T.fail(case, 'the bridge never said the agent is ready (window/logMessage within 10 s): ' .. T.json(T.logged[client.id]))
  end
  return ready
end

-- Starts the bridge (client name `name`, one offered encoding) attached to the current buffer,
-- waits for LspAttach and for the agent to be ready. extra: arguments for the agent.
function T.start_client(case, name, extra)
  local buf = api.nvim_get_current_buf()
  local attached = false
  api.nvim_create_autocmd('LspAttach', {
    buffer = buf,
    once = true,
    callback = function()
      attached = true
    end,
  })
  local cmd = { T.bridge, '--log-file', T.bridge_log, '--log-level', 'debug', '--' }
  vim.list_extend(cmd, T.agent_cmd)
  vim.list_extend(cmd, { '--encoding', T.agent_enc, '--log', T.agent_log })
  vim.list_extend(cmd, extra or {})
  local id = vim.lsp.start({
    name = name,
    cmd = cmd,
    root_dir = T.dir,
    -- Offer exactly one encoding (lists replace the defaults, see NOTES.md).
    capabilities = { general = { positionEncodings = { T.enc } } },
    handlers = { ['window/logMessage'] = log_message },
    -- Same process group as nvim, so the Go test can end everything on timeout.
    detached = false,
  }, { bufnr = buf })
  if not id then
    T.fail(case, 'vim.lsp.start did not return a client id')
    return nil
  end
  local client = vim.lsp.get_client_by_id(id)
  if not T.wait_for(function()
    return attached
  end, 10000) then
    T.fail(case, 'the bridge did not attach within 10 s (no initialize answer?)')
    return nil
  end
  T.sleep(50)
  if client.offset_encoding ~= T.enc then
    T.fail(
      case,
      ('offered only positionEncodings={%q}; server answered positionEncoding=%s, client.offset_encoding=%s'):format(
        T.enc,
        tostring(client.server_capabilities.positionEncoding),
        client.offset_encoding
      )
    )
  end
  local cmds = vim.tbl_get(client.server_capabilities, 'executeCommandProvider', 'commands') or {}
  for _, c in ipairs({ T.ACCEPT, T.REJECT }) do
    if not vim.list_contains(cmds, c) then
      T.fail(case, 'executeCommandProvider.commands lacks ' .. c .. ': ' .. T.json(cmds))
    end
  end
  T.out(('INFO %s: client %q, positionEncoding=%s'):format(case, name, client.offset_encoding))
  if not T.wait_ready(case, client) then
    return nil
  end
  return client
end

-- Opens path in the current window (writing lines first when given) and attaches client.
function T.open(path, lines, client)
  if lines then
    T.write_file(path, lines)
  end
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  if client then
    vim.lsp.buf_attach_client(buf, client.id)
    T.wait_for(function()
      return vim.lsp.buf_is_attached(buf, client.id)
    end, 2000)
    T.sleep(20)
  end
  return buf
end

-- The range from the first occurrence of `from` in line (0-based row) to the end of the first
-- occurrence of `to` after it, in encoding enc.
function T.range_of(line, row, from, to, enc)
  local s = assert(line:find(from, 1, true), from .. ' not in ' .. line) - 1
  local e = s + #from
  if to then
    local s2 = assert(line:find(to, s + 1, true), to .. ' not in ' .. line) - 1
    e = s2 + #to
  end
  return {
    start = { line = row, character = vim.str_utfindex(line, enc, s, false) },
    ['end'] = { line = row, character = vim.str_utfindex(line, enc, e, false) },
  }
end

-- Runs main in the coroutine, with a watchdog; prints the verdict and exits.
function T.run(main, clients)
  vim.o.showmode = false
  vim.o.hidden = true
  vim.lsp.log.set_level('debug')
  T.out('INFO lsp log: ' .. vim.lsp.log.get_filename())
  vim.defer_fn(function()
    T.out('FAIL watchdog: the test did not finish in 35 s')
    vim.cmd('cquit 2')
  end, 35000)
  co = coroutine.create(function()
    local ok, err = pcall(main)
    if not ok then
      T.fail('internal', 'error: ' .. tostring(err))
    end
    for _, client in ipairs(vim.lsp.get_clients()) do
      client:stop()
    end
    T.wait_for(function()
      return #vim.lsp.get_clients() == 0
    end, 2000)
    if #T.failures == 0 then
      T.out('ALL PASSED')
      vim.cmd('qa!')
    else
      T.out('FAILED (' .. #T.failures .. ')')
      vim.cmd('cquit 1')
    end
  end)
  local ok, err = coroutine.resume(co)
  if not ok then
    T.out('FAIL internal: ' .. tostring(err))
    vim.cmd('cquit 1')
  end
end

return T
