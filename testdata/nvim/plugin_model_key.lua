-- Headless Neovim end-to-end test of what a user sees when the model agent's server refuses the
-- key, with the plugin installed by vim.pack and set up with the model agent
-- (acp-lsp-bridge agent --model-url MODEL_URL --api-key-env FAKE_MODEL_KEY): as they type, no
-- ghost text, the statusline turns to "✗ next edit", and they are told once, naming the variable
-- and the server, whatever they type next; the key is in no message; once the server takes the
-- key, asking with <M-CR> offers the suggestion and the statusline is "✓ next edit" again.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/model_server_test.go): ACP_PLUGIN_REPO, NVIM_TEST_DIR, NVIM_TEST_LIB,
-- MODEL_URL (the fake server), FAKE_MODEL_KEY, MODEL_HEALTHY_FLAG (a file to create when the
-- server is to take the key).
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, ghost = T.check, T.wait_for, T.sleep, T.ghost

-- What the user is told (vim.notify), in order.
local said = T.record_notify()
local function told(text)
  local n = 0
  for _, m in ipairs(said) do
    if m:find(text, 1, true) then
      n = n + 1
    end
  end
  return n
end

T.install()
local acp = require('acp_lsp_bridge')
acp.setup({
  agent = { 'acp-lsp-bridge', 'agent', '--model-url', os.getenv('MODEL_URL'), '--model', 'fake-coder', '--api-key-env', 'FAKE_MODEL_KEY' },
})

T.run(function()
  local buf = T.edit(T.dir .. '/main.go', 'package p\n\nfunc f() {\n\t\n}\n')
  check(wait_for(function() return acp.status() == '✓ next edit' end, 10000), 'status() is not "✓ next edit" once started: ' .. acp.status())
  sleep(300)

  T.type_at_end(4, 'x := f')
  if check(wait_for(function() return acp.status() == '✗ next edit' end, 10000), 'status() did not turn "✗ next edit": ' .. acp.status()) then
    T.out('STEP failed ok')
  end
  check(wait_for(function() return told('refused the API key in FAKE_MODEL_KEY') == 1 end, 5000), 'not told of the refused key: ' .. vim.inspect(said))
  local message
  for _, m in ipairs(said) do
    if m:find('refused the API key', 1, true) then
      message = m
    end
  end
  check(message and message:find(os.getenv('MODEL_URL'), 1, true), 'the message does not name the server: ' .. tostring(message))

  -- Typing on asks nothing more of the server and tells nothing more.
  api.nvim_input('o')
  sleep(600)
  check(told('refused the API key') == 1, 'told more than once: ' .. vim.inspect(said))
  check(ghost(buf) == nil, 'ghost text while the key is refused: ' .. tostring(ghost(buf)))
  check(acp.status() == '✗ next edit', 'status() after typing on: ' .. acp.status())
  local messages = api.nvim_exec2('messages', { output = true }).output
  local key = os.getenv('FAKE_MODEL_KEY')
  check(not messages:find(key, 1, true), 'the key is in :messages')
  for _, m in ipairs(said) do
    check(not m:find(key, 1, true), 'the key was in a message: ' .. m)
  end
  T.out('STEP told once ok')

  -- The server takes the key now: asking with <M-CR> offers the suggestion (Neovim asks the
  -- question of window/showMessageRequest with inputlist(): the user picks 1, Apply), the buffer
  -- gets it, and the status is ready again.
  local flag = assert(io.open(os.getenv('MODEL_HEALTHY_FLAG'), 'w'))
  flag:close()
  local question = T.answer_questions(1)
  api.nvim_input('<M-CR>')
  if check(wait_for(function() return T.line(buf, 4) == '\tx := foo()' end, 8000), 'the suggestion was not applied once the server takes the key: ' .. vim.inspect(T.line(buf, 4))) then
    check(question() and question()[1]:find('insert `o()`', 1, true), 'the question: ' .. vim.inspect(question()))
  end
  if check(wait_for(function() return acp.status() == '✓ next edit' end, 5000), 'status() did not come back to "✓ next edit": ' .. acp.status()) then
    T.out('STEP ready again ok')
  end
  api.nvim_input('<Esc>')
  sleep(50)
end)
