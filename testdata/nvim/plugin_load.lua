-- Headless Neovim end-to-end test of what installing the plugin with vim.pack gives, and of
-- setup()'s options: the 'acp' config from lsp/acp.lua (every file type, the bridge by its name),
-- nothing of the plugin running before setup(), the help file with tags (:help acp_lsp_bridge, every
-- |link| in it found), keys overridden or turned off (buffer-local, in the buffer the bridge
-- attached to), prompts passed on as initializationOptions.prompts, and misspelt options refused
-- with a message saying what to write.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment: ACP_PLUGIN_REPO, NVIM_TEST_DIR (the workspace), NVIM_TEST_LIB (shipped_lib.lua).
-- Output: "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check = T.check

T.install()

T.run(function()
  local config = vim.lsp.config.acp
  check(config ~= nil, 'no acp config after vim.pack.add')
  check(config.cmd[1] == 'acp-lsp-bridge' and not vim.tbl_contains(config.cmd, '--'),
    'lsp/acp.lua does not run the bridge by its name with the built-in agent: ' .. vim.inspect(config.cmd))
  check(config.filetypes == nil, 'lsp/acp.lua limits the file types: ' .. vim.inspect(config.filetypes))
  check(not vim.lsp.is_enabled('acp'), 'installing the plugin enabled the bridge')
  check(package.loaded['acp_lsp_bridge'] == nil, 'installing the plugin loaded its module')
  check(not pcall(api.nvim_get_autocmds, { group = 'acp_lsp_bridge' }), 'installing the plugin added autocommands')

  -- The help: vim.pack made its tags when it installed the plugin; :helptags again must not fail
  -- (a duplicate tag is an error), and every link in the file must lead somewhere.
  local doc = vim.api.nvim_get_runtime_file('doc/acp_lsp_bridge.txt', false)[1]
  if check(doc ~= nil, 'doc/acp_lsp_bridge.txt is not on the runtimepath') then
    local ok, err = pcall(vim.cmd.helptags, vim.fs.dirname(doc))
    check(ok, ':helptags: ' .. tostring(err))
    ok, err = pcall(vim.cmd.help, 'acp_lsp_bridge')
    check(ok and api.nvim_buf_get_name(0):match('acp_lsp_bridge%.txt$'), ':help acp_lsp_bridge: ' .. tostring(err))
    local links = {}
    for l in io.lines(doc) do
      for tag in l:gmatch('|([^|%s]+)|') do
        links[tag] = true
      end
    end
    check(vim.tbl_count(links) > 5, 'the help has only ' .. vim.tbl_count(links) .. ' links')
    for tag in pairs(links) do
      ok, err = pcall(vim.cmd.help, tag)
      check(ok, 'the help links to |' .. tag .. '|, which is nowhere: ' .. tostring(err))
    end
    vim.cmd('helpclose')
  end

  -- Misspelt options say what to write.
  local ok, err = pcall(require('acp_lsp_bridge').setup, { agnet = { 'my-agent' } })
  check(not ok and tostring(err):find('unknown option "agnet"', 1, true), 'setup({ agnet = ... }): ' .. tostring(err))
  ok, err = pcall(require('acp_lsp_bridge').setup, { agent = 'my-agent --acp' })
  check(not ok and tostring(err):find("{ 'my-agent', '--acp' }", 1, true), "setup({ agent = 'my-agent --acp' }): " .. tostring(err))
  ok, err = pcall(require('acp_lsp_bridge').setup, { keys = { acept = '<C-l>' } })
  check(not ok and tostring(err):find('unknown key "acept"', 1, true), 'setup({ keys = { acept = ... } }): ' .. tostring(err))
  -- model: the bridge's own agent with a model, its command written by the plugin.
  ok, err = pcall(require('acp_lsp_bridge').setup, { agent = { 'my-agent' }, model = { url = 'http://127.0.0.1:8012' } })
  check(not ok and tostring(err):find('give agent or model, not both', 1, true), 'setup({ agent, model }): ' .. tostring(err))
  ok, err = pcall(require('acp_lsp_bridge').setup, { model = { url = 'http://127.0.0.1:8012', fromat = 'fim' } })
  check(not ok and tostring(err):find('model: unknown field "fromat"', 1, true), 'setup({ model = { fromat } }): ' .. tostring(err))
  ok, err = pcall(require('acp_lsp_bridge').setup, { model = { name = 'qwen2.5-coder-1.5b' } })
  check(not ok and tostring(err):find('model.url is needed', 1, true), 'setup({ model = { name } }): ' .. tostring(err))
  require('acp_lsp_bridge').setup({ model = { url = 'http://127.0.0.1:8012', name = 'qwen2.5-coder-1.5b', format = 'fim', args = { '--timeout', '5s' } } })
  local want = { 'acp-lsp-bridge', '--', 'acp-lsp-bridge', 'agent', '--model-url', 'http://127.0.0.1:8012', '--model', 'qwen2.5-coder-1.5b', '--model-format', 'fim', '--timeout', '5s' }
  local cmd = vim.list_slice(vim.lsp.config.acp.cmd, 1)
  if cmd[2] == '--log-file' then
    table.remove(cmd, 2)
    table.remove(cmd, 2)
  end
  check(vim.deep_equal(cmd, want), 'setup({ model = ... }): cmd ' .. vim.inspect(vim.lsp.config.acp.cmd))
  ok, err = pcall(require('acp_lsp_bridge').setup, { prompts = 'always' })
  check(not ok and tostring(err):find('want "explicit" (the default), "auto" or "off"', 1, true), "setup({ prompts = 'always' }): " .. tostring(err))

  -- prompts reaches the bridge as initializationOptions.prompts; setup() again without it puts
  -- the default back.
  require('acp_lsp_bridge').setup({ prompts = 'auto' })
  check(vim.tbl_get(vim.lsp.config.acp, 'init_options', 'prompts') == 'auto', "setup({ prompts = 'auto' }): init_options " .. vim.inspect(vim.lsp.config.acp.init_options))
  require('acp_lsp_bridge').setup({})
  check(vim.tbl_get(vim.lsp.config.acp, 'init_options', 'prompts') == 'explicit', 'setup({}) after prompts = auto: init_options ' .. vim.inspect(vim.lsp.config.acp.init_options))

  -- Keys: one changed, one turned off, the others as they were; buffer-local.
  require('acp_lsp_bridge').setup({ keys = { accept = '<C-l>', dismiss = false } })
  local buf = T.edit(T.dir .. '/main.go', 'package main\n')
  local function mapped(mode, lhs)
    local m = vim.fn.maparg(lhs, mode, false, true)
    return m.buffer == 1 and m.desc ~= nil and m.desc:find('^Next edit') ~= nil
  end
  check(T.wait_for(function() return mapped('i', '<C-L>') end, 3000), '<C-l> is not mapped to accept')
  check(not mapped('i', '<Tab>'), '<Tab> is mapped though accept moved to <C-l>')
  check(not mapped('i', '<C-]>'), '<C-]> is mapped though dismiss = false')
  check(mapped('i', '<M-CR>') and mapped('n', '<M-CR>'), '<M-CR> is not mapped in insert and normal mode')
  check(mapped('n', '<leader>na'), '<leader>na is not mapped')
  -- In a buffer the bridge is not attached to, no key.
  vim.cmd('enew')
  check(not mapped('i', '<C-L>'), '<C-l> is mapped in a buffer without the bridge')
  api.nvim_set_current_buf(buf)

  -- setup() again, keys = false: the keys of the first are gone from the attached buffer.
  require('acp_lsp_bridge').setup({ keys = false })
  check(not mapped('i', '<C-L>') and not mapped('i', '<M-CR>') and not mapped('n', '<leader>na'),
    'keys = false left keys mapped')
end)
