-- Headless Neovim end-to-end test of the quality gate as a user meets it, with the plugin
-- installed by vim.pack and set up with the model agent (acp-lsp-bridge agent --model-url
-- MODEL_URL), in front of a fake model that answers with the fix (e2e/model_gate_test.go):
--   * a slip: the user deletes the "u" of "return" by accident; the model puts it back. The gate
--     used to keep that back as an undo of the last edit; now the ghost text shows "u" and <Tab>
--     takes it.
--   * a change the user began: they turn "totals = []" into "totals = {}"; the model rewrites the
--     rest of the function to match. The gate used to keep that back as a rewrite; now, asked
--     with <M-CR> (the rewrite lies below the cursor, where Neovim shows no ghost text), it is
--     offered and applied, the rewritten lines in the buffer.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment: ACP_PLUGIN_REPO, NVIM_TEST_DIR, NVIM_TEST_LIB, MODEL_URL.
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, ghost = T.check, T.wait_for, T.sleep, T.ghost

T.install()
local acp = require('acp_lsp_bridge')
acp.setup({ agent = { 'acp-lsp-bridge', 'agent', '--model-url', os.getenv('MODEL_URL'), '--model', 'fake-coder', '--verbose' } })

T.run(function()
  -- The slip.
  local buf = T.edit(T.dir .. '/sum.go', 'package stats\n\nfunc Sum(xs []int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}\n')
  check(wait_for(function() return acp.status() == '✓ next edit' end, 10000), 'status() is not ready: ' .. acp.status())
  sleep(300)
  api.nvim_win_set_cursor(0, { 8, 4 }) -- after "\tret"
  api.nvim_input('i<Del>')
  check(wait_for(function() return T.line(buf, 8) == '\tretrn total' end, 3000), 'the slip: line 8 reads ' .. vim.inspect(T.line(buf, 8)))
  if check(wait_for(function() return ghost(buf) ~= nil end, 10000), 'no ghost text after the slip') then
    check(ghost(buf) == 'u', 'the ghost text ' .. vim.inspect(ghost(buf)))
    api.nvim_input('<Tab>')
    if check(wait_for(function() return T.line(buf, 8) == '\treturn total' end, 3000), 'after <Tab> line 8 reads ' .. vim.inspect(T.line(buf, 8))) then
      T.out('STEP slip ok')
    end
  end
  api.nvim_input('<Esc>')
  sleep(100)

  -- The change the user began.
  buf = T.edit(T.dir .. '/collect.py', 'def collect(orders):\n    totals = []\n    for order in orders:\n        totals.append(order.amount)\n    seen = []\n    for order in orders:\n        seen.append(order.id)\n    first = totals[0]\n    return totals, seen, first\n')
  sleep(300)
  api.nvim_win_set_cursor(0, { 2, 13 }) -- on the "[" of "totals = []"
  api.nvim_input('c${}')
  check(wait_for(function() return T.line(buf, 2) == '    totals = {}' end, 3000), 'the change: line 2 reads ' .. vim.inspect(T.line(buf, 2)))
  -- The rewrite lies below the cursor, where Neovim shows no ghost text: the user asks for it
  -- with <M-CR>, and Neovim asks the question of window/showMessageRequest with inputlist(): they
  -- pick 1, Apply.
  local question = T.answer_questions(1)
  api.nvim_input('<M-CR>')
  if check(wait_for(function() return T.line(buf, 4) == '        totals[order.id] = order.amount' end, 10000), 'after asking, line 4 reads ' .. vim.inspect(T.line(buf, 4)) .. '; the question: ' .. vim.inspect(question())) then
    check(T.line(buf, 9) == '    return dict(totals), seen, first', 'line 9 reads ' .. vim.inspect(T.line(buf, 9)))
    T.out('STEP refactor ok')
  end
  api.nvim_input('<Esc>')
  sleep(50)
end)
