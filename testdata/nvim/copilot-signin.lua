-- Headless Neovim 0.12 with the plugin (installed with vim.pack) set up for GitHub Copilot as
-- editors/neovim/README.md says, setup({ agent = 'copilot' }): acp-lsp-bridge --agent copilot runs
-- the real copilot-language-server, which is not signed in (a fresh HOME, no network, over "SSH").
-- Run by e2e/copilot_editors_signin_test.go.
--
-- vim.lsp shows window/showMessageRequest with vim.ui.select, whose default lists the choices with
-- inputlist(); the script lets Neovim's own inputlist() ask, reads the lines it shows and types the
-- number of the choice the user picks (COPILOT_ANSWERS: titles separated by "|", one per question;
-- "Not now" after them), then Enter, as keys (nvim_input). Once the bridge has said its last word,
-- it writes what was shown to NVIM_TEST_DIR/result.json: {questions: [[lines]], messages} (messages
-- as :messages lists them) and quits, for the Go test to check.
--
-- Environment: ACP_PLUGIN_REPO, ACP_LSP_BRIDGE, NVIM_TEST_LIB, NVIM_TEST_DIR, COPILOT_ANSWERS.
-- Output: "FAIL <what>" per failed check, then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))

local answers = vim.split(os.getenv('COPILOT_ANSWERS') or '', '|', { plain = true, trimempty = true })
local questions = {}
local inputlist = vim.fn.inputlist
vim.fn.inputlist = function(lines)
  questions[#questions + 1] = lines
  -- The user reads the list and types the number of their choice, then Enter.
  local want, number = answers[#questions] or 'Not now', nil
  for _, line in ipairs(lines) do
    local n, title = line:match('^(%d+)[:.] (.*)$')
    if title == want then
      number = n
    end
  end
  T.out(('QUESTION %d: %s; typing %s for %q'):format(#questions, table.concat(lines, ' | '), tostring(number), want))
  local timer = vim.uv.new_timer()
  timer:start(300, 0, function()
    timer:close()
    api.nvim_input((number or '') .. '<CR>')
  end)
  return inputlist(lines)
end

local function messages()
  return api.nvim_exec2('messages', { output = true }).output
end

T.install()
require('acp_lsp_bridge').setup({
  agent = 'copilot',
  bridge = os.getenv('ACP_LSP_BRIDGE'),
  log_file = T.dir .. '/bridge.log',
})

T.run(function()
  local f = assert(io.open(T.dir .. '/main.go', 'w'))
  f:write('package main\n\nfunc main() {\n}\n')
  f:close()
  vim.cmd('edit ' .. vim.fn.fnameescape(T.dir .. '/main.go'))
  T.check(T.wait_for(function() return messages():find('is not signed in', 1, true) ~= nil end, 35000),
    'no message saying GitHub Copilot is not signed in; :messages:\n' .. messages())
  T.sleep(300)
  local out = assert(io.open(T.dir .. '/result.json', 'w'))
  out:write(vim.json.encode({ questions = questions, messages = messages() }))
  out:close()
  T.out('MESSAGES:\n' .. messages())
end)
