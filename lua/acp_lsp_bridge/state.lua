-- acp-lsp-bridge for Neovim: what the bridge last said of its state (the acp-lsp-bridge/status
-- notification, docs/surfaces.md), per client. lsp/acp.lua routes the notification here, so it is
-- kept with or without setup(); status() and :checkhealth acp_lsp_bridge read it.

local M = {}

--- The latest status of each acp client, by client id: { state, message, uri?, agent?, time }.
M.by_client = {}

--- The statusline text of each state.
M.labels = {
  starting = '… next edit',
  signingIn = '⚿ next edit: sign in',
  ready = '✓ next edit',
  asking = '⋯ next edit',
  off = '○ next edit off',
  excluded = '⊘ next edit',
  slow = '⧗ next edit: slow',
  failed = '✗ next edit',
}

--- The handler of acp-lsp-bridge/status.
function M.handler(_, result, ctx)
  if type(result) ~= 'table' or type(result.state) ~= 'string' then
    return
  end
  result.time = os.time()
  M.by_client[ctx.client_id] = result
  vim.cmd('redrawstatus')
end

return M
