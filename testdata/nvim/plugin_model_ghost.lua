-- Headless Neovim end-to-end test of the model agent's ghost text with the plugin installed by
-- vim.pack and set up with agent = MODEL_AGENT (e2e/fim_editors_test.go): the FIM format against
-- a real llama-server, Inception's Mercury and Sweep's hosted service against fakes of them.
--
-- The user first edits and saves util.go (a file the FIM prompt carries a chunk of), then opens
-- main.go and types MODEL_TYPE at the end of line 9. When the server's answer comes (the agent's
-- log says so) and no ghost text with it (the tiny random model's answer may be dropped: invalid
-- UTF-8, nothing left once cleaned), they type the next character of MODEL_RETRY and wait again.
-- The ghost text shown at the cursor is taken with the plugin's <Tab>: the buffer must then read
-- as before with exactly that text at the cursor, and the file is saved.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment: ACP_PLUGIN_REPO, NVIM_TEST_DIR, NVIM_TEST_LIB, MODEL_AGENT (the agent's command, a
-- JSON list) or MODEL_SETUP (setup()'s model option instead, a JSON object), MODEL_TYPE (the keys typed), MODEL_RETRY (characters to type one at a time while no
-- ghost text comes; "" for none), MODEL_WAIT (milliseconds to wait for the server's answer each
-- time). The agent must log with --verbose.
-- Output: "STEP <name> ok" per step, "SHOWN <json>" ({before, row, col, ghost}: the buffer's text
-- before accepting, the cursor's 1-based row and 0-based byte column, the ghost text), "FAIL
-- <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep = T.check, T.wait_for, T.sleep

vim.o.showmode = false
T.install()
local acp = require('acp_lsp_bridge')
local opts = { suggest_timeout = 30000 }
if os.getenv('MODEL_SETUP') then
  -- setup()'s model option: the plugin writes the agent's command.
  opts.model = vim.json.decode(os.getenv('MODEL_SETUP'))
else
  opts.agent = vim.json.decode(os.getenv('MODEL_AGENT'))
end
acp.setup(opts)

-- shown is the ghost text in buf as the user sees it, its first line and the lines below it
-- joined by line breaks, and the 0-based row and byte column it is drawn at; nil when none.
local function shown(buf)
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
    local d = m[4]
    if d and (d.virt_text or d.virt_lines) then
      local lines = {}
      for _, chunks in ipairs({ d.virt_text or {}, unpack(d.virt_lines or {}) }) do
        local parts = {}
        for _, c in ipairs(chunks) do
          table.insert(parts, c[1])
        end
        table.insert(lines, table.concat(parts))
      end
      return table.concat(lines, '\n'), m[2], m[3]
    end
  end
  return nil
end

-- answers counts the answers the agent got from the model's server, from its log (--verbose)
-- in the bridge's, where the plugin has it by default.
local function answers()
  local f = io.open(vim.fn.stdpath('log') .. '/acp-lsp-bridge.log')
  if not f then
    return 0
  end
  local log = f:read('*a')
  f:close()
  local n, at = 0, 1
  while true do
    local i = log:find('msg=\\"model: answer\\"', at, true)
    if not i then
      return n
    end
    n, at = n + 1, i + 1
  end
end

local function text_of(buf)
  return table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

T.run(function()
  -- Another file the user works in: edited and saved.
  local util = T.edit(T.dir .. '/util.go', 'package main\n\n// scale multiplies by the factor.\nfunc scale(v, factor int) int {\n\treturn v * factor\n}\n')
  check(wait_for(function() return acp.status() == '✓ next edit' end, 10000), 'status() is not ready: ' .. acp.status())
  sleep(300)
  api.nvim_win_set_cursor(0, { 5, 0 })
  api.nvim_input('A // the product<Esc>')
  check(wait_for(function() return T.line(util, 5) == '\treturn v * factor // the product' end, 3000), 'util.go line 5 reads ' .. vim.inspect(T.line(util, 5)))
  vim.cmd('silent write')
  sleep(300)

  local buf = T.edit(T.dir .. '/main.go', table.concat({
    'package main',
    '',
    '// add adds, in € (日本).',
    'func add(a, b int) int {',
    '\treturn a + b',
    '}',
    '',
    'func main() {',
    '\ty := add',
    '\tprintln(scale(y, 2))',
    '}',
    '',
  }, '\n'))
  sleep(300)

  local retry = os.getenv('MODEL_RETRY') or ''
  local wait = tonumber(os.getenv('MODEL_WAIT') or '') or 10000
  local ghost, row, col
  local function seen()
    ghost, row, col = shown(buf)
    return ghost ~= nil and api.nvim_get_mode().mode == 'i'
  end
  for i = 0, #retry do
    local before = answers()
    if i == 0 then
      T.type_at_end(9, os.getenv('MODEL_TYPE'))
    else
      api.nvim_input(retry:sub(i, i))
    end
    -- The ghost text, or the server's answer without it (dropped): then one more character.
    wait_for(function() return seen() or answers() > before end, wait)
    if seen() or wait_for(seen, 2000) then
      break
    end
    T.out('NO GHOST after ' .. vim.inspect(T.line(buf, 9)))
  end
  if not check(ghost ~= nil, 'no ghost text after typing: line 9 reads ' .. vim.inspect(T.line(buf, 9))) then
    return
  end
  local cursor = api.nvim_win_get_cursor(0)
  check(row == cursor[1] - 1 and col == cursor[2], ('the ghost text is drawn at %d:%d, the cursor is at %d:%d'):format(row, col, cursor[1] - 1, cursor[2]))
  local before = text_of(buf)
  T.out('SHOWN ' .. vim.json.encode({ before = before, row = cursor[1], col = cursor[2], ghost = ghost }))
  T.out('STEP ghost text ok')

  -- <Tab> takes it: the buffer reads as before with the ghost text at the cursor.
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local at = lines[cursor[1]]
  lines[cursor[1]] = at:sub(1, cursor[2]) .. ghost .. at:sub(cursor[2] + 1)
  local want = table.concat(lines, '\n')
  api.nvim_input('<Tab>')
  if check(wait_for(function() return text_of(buf) == want end, 3000), 'after <Tab> the buffer reads ' .. vim.inspect(text_of(buf)) .. ', want ' .. vim.inspect(want)) then
    T.out('STEP accept ok')
  end
  api.nvim_input('<Esc>')
  sleep(50)
  vim.cmd('silent write')
end)
