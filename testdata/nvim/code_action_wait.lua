-- Headless Neovim end-to-end test: the code-action menu is never held by a busy agent. Two language
-- servers attach to the buffer, as for a user: the bridge, whose agent (acp-test-agent
-- --suggest-delay 5s) takes 5 s to answer, and acp-test-lsp, the language's own server, which
-- offers "Fix imports (the language server)" at once. Neovim opens the code-action menu only once
-- every server has answered: it opens within the bridge's --code-action-wait, with the language
-- server's action, long before the agent answers. Once the agent has answered, the menu offers its
-- suggestion too, without asking it again.
--
--   nvim --headless --clean -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_surfaces_test.go): ACP_LSP_BRIDGE, ACP_TEST_AGENT, ACP_TEST_LSP,
-- NVIM_TEST_DIR (the workspace; rules.json, agent.log and bridge.log live there), NVIM_TEST_LIB.
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, agent_msgs = T.check, T.wait_for, T.sleep, T.agent_msgs

local f = assert(io.open(T.dir .. '/rules.json', 'w'))
f:write('[{"when":"total := su","find":"su","replace":"sum(prices)"}]')
f:close()
vim.lsp.config('acp', {
  cmd = {
    os.getenv('ACP_LSP_BRIDGE'), '--log-file', T.dir .. '/bridge.log', '--log-level', 'debug',
    '--', os.getenv('ACP_TEST_AGENT'), '--rules', T.dir .. '/rules.json', '--log', T.agent_log, '--suggest-delay', '5s',
  },
  filetypes = { 'go' },
  root_markers = { 'rules.json' },
})
vim.lsp.config('lang', {
  cmd = { os.getenv('ACP_TEST_LSP'), '--mirror-dir', T.dir .. '/mirror', '--code-action', 'Fix imports (the language server)' },
  filetypes = { 'go' },
  root_markers = { 'rules.json' },
})
vim.lsp.enable({ 'acp', 'lang' })

-- The menu, as the user sees it: vim.ui.select's items, and when it opened.
local menus = {}
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, it in ipairs(items) do
    titles[#titles + 1] = opts.format_item and opts.format_item(it) or tostring(it)
  end
  menus[#menus + 1] = { titles = titles, at = vim.uv.hrtime() }
  on_choice(nil)
end

local function menu_has(m, text)
  for _, t in ipairs(m.titles) do
    if t:find(text, 1, true) then
      return true
    end
  end
  return false
end

T.run(function()
  vim.cmd('edit ' .. T.dir .. '/shop.go')
  local buf = api.nvim_get_current_buf()
  api.nvim_buf_set_lines(buf, 0, -1, false, { 'package shop', '', 'total := s' })
  check(wait_for(function() return #vim.lsp.get_clients({ bufnr = buf }) == 2 end, 10000), 'both servers never attached')
  check(wait_for(function() return #agent_msgs('document/didOpen') > 0 end, 10000), 'the agent never got the document')
  -- The user types the "u": the agent's rule fits.
  api.nvim_win_set_cursor(0, { 3, 10 })
  api.nvim_input('au<Esc>')
  check(wait_for(function() return api.nvim_buf_get_lines(buf, 2, 3, false)[1] == 'total := su' end, 3000), 'the typing did not land')
  sleep(300)
  api.nvim_win_set_cursor(0, { 3, 10 })

  -- The menu opens while the agent still works, with the language server's action.
  local asked = #agent_msgs('nes/suggest')
  local began = vim.uv.hrtime()
  vim.lsp.buf.code_action()
  check(wait_for(function() return #menus == 1 end, 8000), 'the code-action menu never opened')
  if menus[1] then
    local took = (menus[1].at - began) / 1e6
    check(menu_has(menus[1], 'Fix imports (the language server)'), 'the menu lacks the language server\'s action: ' .. vim.inspect(menus[1].titles))
    check(not menu_has(menus[1], 'Next edit'), 'the menu has the agent\'s suggestion before it answered')
    check(took < 4000, ('the menu opened after %d ms: it waited for the agent (5 s)'):format(took))
    T.out(('STEP menu at once ok: %d ms, %s'):format(took, vim.inspect(menus[1].titles)))
  end
  check(wait_for(function() return #agent_msgs('nes/suggest') == asked + 1 end, 5000), 'the agent was never asked')

  -- After the agent's 5 s: its answer is offered, and it is not asked again.
  sleep(5500)
  vim.lsp.buf.code_action()
  check(wait_for(function() return #menus == 2 end, 8000), 'the code-action menu did not open again')
  if menus[2] then
    check(menu_has(menus[2], 'Fix imports (the language server)') and menu_has(menus[2], 'Next edit'),
      'the second menu lacks the agent\'s suggestion or the language server\'s action: ' .. vim.inspect(menus[2].titles))
    T.out('STEP late answer offered ok: ' .. vim.inspect(menus[2].titles))
  end
  check(#agent_msgs('nes/suggest') == asked + 1, ('the agent was asked %d times, want once'):format(#agent_msgs('nes/suggest') - asked))
end)
