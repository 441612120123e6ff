-- Headless Neovim end-to-end test of the plugin with an agent that has no Next Edit Suggestions
-- (testdata/peers/session-agent.mjs, a coding agent on the official ACP SDK, as Codex, Claude and
-- Gemini's are): installed with vim.pack and set up with
--   require('acp_lsp_bridge').setup({ agent = { node, session-agent.mjs }, prompts = 'auto' })
-- the bridge found on the PATH. The user types "retur" and the agent's prediction, "return nil",
-- appears as ghost text; <Tab> accepts it.
--
-- Why prompts = 'auto': Neovim 0.12's inline completion asks only by itself while you type
-- (triggerKind 2, automatic), which the bridge does not prompt an agent for by default (each prompt
-- costs the user). The other way to ask, the plugin's <M-CR> (acp-lsp-bridge.suggest), prompts
-- the agent but shows its suggestion as a question (window/showMessageRequest: Apply or Dismiss),
-- not as ghost text. So a user who wants ghost text from such an agent sets prompts = 'auto', and
-- that is the path taken here.
--
--   nvim --headless -i NONE -c 'lua dofile(vim.env.NVIM_TEST_SCRIPT)'
--
-- Environment (set by e2e/nvim_plugin_test.go): ACP_PLUGIN_REPO, NVIM_TEST_DIR (the workspace),
-- NVIM_TEST_LIB (shipped_lib.lua), SESSION_AGENT_NODE and SESSION_AGENT_SCRIPT (the agent),
-- SESSION_AGENT_LOG (its log, outside the workspace) and the agent's other SESSION_AGENT_*
-- settings and PEERS_NODE_MODULES, which it inherits through the bridge.
-- Output: "STEP <name> ok" per step, "FAIL <what>", then "ALL PASSED"; exit code 0 only then.

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for, sleep, ghost = T.check, T.wait_for, T.sleep, T.ghost

-- The requests and notifications the agent logged, read by T.agent_msgs.
T.agent_log = os.getenv('SESSION_AGENT_LOG')
local agent_msgs = T.agent_msgs

T.install()
require('acp_lsp_bridge').setup({
  agent = { os.getenv('SESSION_AGENT_NODE'), os.getenv('SESSION_AGENT_SCRIPT') },
  prompts = 'auto',
})

T.run(function()
  local buf = T.edit(T.dir .. '/main.go', 'package main\n\nfunc f() error {\n\t\n}\n')
  check(wait_for(function() return #agent_msgs('session/new') > 0 end, 10000), 'the agent never got session/new')
  -- vim.lsp.inline_completion sets the buffer up in a vim.schedule after LspAttach; keys typed
  -- before that ask nothing. Give it time on a loaded machine.
  sleep(300)

  api.nvim_win_set_cursor(0, { 4, 1 })
  api.nvim_input('Aretur')
  -- Neovim waits 200 ms after the last key, the bridge 600 ms more (prompts "auto"), then the
  -- agent answers.
  local shown = wait_for(function() return ghost(buf) ~= nil end, 10000)
  if check(shown, 'no ghost text after typing "retur"') then
    T.out('STEP ghost text ok: ' .. vim.inspect(ghost(buf)))
    T.accept(buf, 4, '\treturn nil', '<Tab>', function() api.nvim_input('<Tab>') end)
  end
  api.nvim_input('<Esc>')
  sleep(50)
  local prompts = agent_msgs('session/prompt')
  check(#prompts >= 1, 'the agent was never prompted')
  local modes = agent_msgs('session/set_mode')
  check(#modes == 1 and modes[1].params.modeId == 'read-only', 'session/set_mode ' .. vim.inspect(modes) .. ', want the read-only mode')
end)
