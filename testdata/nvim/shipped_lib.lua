-- Helpers of the headless Neovim scripts that load the shipped editors/neovim/acp.lua (shipped.lua,
-- builtin.lua; run by e2e/nvim_shipped_test.go). The test body runs in a coroutine resumed by
-- timers, so that Neovim's main loop keeps running, and handles the typed keys, while it waits.
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

-- The messages of method the agent logged (acp-test-agent --log T.agent_log).
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

return T
