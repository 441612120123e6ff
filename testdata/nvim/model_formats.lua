-- Headless Neovim 0.12 end-to-end test of the model agent in one prompt format
-- (e2e/model_formats_test.go): Neovim runs the bridge with `acp-lsp-bridge agent --model-url URL
-- --model NAME` against a fake llama-server that checks the request of that format and answers
-- in it. The user types "(3" after "y := add" in main.go; the model finishes the call; the ghost
-- text is accepted with vim.lsp.inline_completion.get() and the file is written.
--
-- Environment: ACP_LSP_BRIDGE, NVIM_TEST_DIR (the workspace), NVIM_TEST_LIB, MODEL_URL, MODEL_NAME,
-- and MODEL_CURSOR: the column (0-based, bytes) the cursor must be at after accepting, when the
-- model's answer places it ("" when it does not).
-- Output: "GHOST <text>", "CURSOR <row> <col>", "FAIL <what>", then "ALL PASSED".

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for = T.check, T.wait_for

local text = table.concat({
  'package main',
  '',
  'func add(a, b int) int {',
  '\treturn a + b',
  '}',
  '',
  'func main() {',
  '\tx := add(1, 2)',
  '\ty := add',
  '\tprintln(x, y)',
  '}',
  '',
}, '\n')

T.run(function()
  local path = T.dir .. '/main.go'
  local fw = assert(io.open(path, 'w'))
  fw:write(text)
  fw:close()
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  local bridge = os.getenv('ACP_LSP_BRIDGE')
  if not T.start_bridge(buf, { bridge, 'agent', '--model-url', os.getenv('MODEL_URL'), '--model', os.getenv('MODEL_NAME'), '--verbose' }) then
    return
  end
  vim.lsp.inline_completion.enable()
  -- vim.lsp.inline_completion sets the buffer up in a vim.schedule after LspAttach.
  T.sleep(300)
  api.nvim_win_set_cursor(0, { 9, 8 })
  api.nvim_input('a(3')
  check(wait_for(function() return T.line(buf, 9) == '\ty := add(3' end, 3000), 'typing: line 9 reads ' .. vim.inspect(T.line(buf, 9)))
  local shown = wait_for(function() return T.ghost(buf) ~= nil end, 15000)
  T.out('GHOST ' .. vim.inspect(T.ghost(buf)))
  if not check(shown, 'no ghost text after typing') then
    return
  end
  check(api.nvim_get_mode().mode == 'i', 'left insert mode before accepting')
  check(vim.lsp.inline_completion.get(), 'vim.lsp.inline_completion.get() accepted nothing')
  check(wait_for(function() return T.line(buf, 9) == '\ty := add(3, 4)' end, 3000),
    'after accepting line 9 reads ' .. vim.inspect(T.line(buf, 9)))
  local want_col = tonumber(os.getenv('MODEL_CURSOR') or '')
  if want_col then
    -- The accept command moves the cursor where the model put it (window/showDocument).
    check(wait_for(function()
      local c = api.nvim_win_get_cursor(0)
      return c[1] == 9 and c[2] == want_col
    end, 3000), 'the cursor is at ' .. vim.inspect(api.nvim_win_get_cursor(0)) .. ', want {9, ' .. want_col .. '}')
  end
  local c = api.nvim_win_get_cursor(0)
  T.out('CURSOR ' .. c[1] .. ' ' .. c[2])
  vim.cmd('stopinsert')
  vim.cmd('silent write')
end)
