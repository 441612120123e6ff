-- acp-lsp-bridge for Neovim: what the bridge last said of its state (the acp-lsp-bridge/status
-- notification, docs/surfaces.md), per client and per buffer. lsp/acp.lua routes the notification
-- here, so it is kept with or without setup(); status() and :checkhealth acp_lsp_bridge read it.

local M = {}

--- The latest status of each acp client, by client id: { state, message, uri?, agent?, time }.
M.by_client = {}

--- The latest status of each document (uri) the bridge spoke of, per client id, in a state that
--- is about that document. A state about the agent (starting, signing in, slow, failed) holds for
--- every buffer, and is read from by_client.
M.by_uri = {}

--- The states that concern one document: ready, asking, off, excluded. The others concern the agent.
M.about_document = { ready = true, asking = true, off = true, excluded = true }

--- The latest ready or off status of each client, whichever document it named: what holds for a
--- document the bridge has said nothing of yet.
M.general = {}

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
  local id = ctx.client_id
  local last = M.by_client[id]
  M.by_client[id] = result
  local docs = M.by_uri[id] or {}
  M.by_uri[id] = docs
  -- The bridge says when a request is no longer with the agent only of the document the user is
  -- in: "asking" about the one it spoke of before no longer says anything.
  if last and last.uri and last.uri ~= result.uri and docs[last.uri] and docs[last.uri].state == 'asking' then
    docs[last.uri] = nil
  end
  if type(result.uri) == 'string' and M.about_document[result.state] then
    docs[result.uri] = result
  end
  if result.state == 'ready' or result.state == 'off' then
    M.general[id] = result
  end
  vim.cmd('redrawstatus')
end

--- The status for document uri of client id: the latest the bridge said of it, unless the agent
--- is in a state that concerns every document (starting, signing in, slow, failed). For a document
--- it has said nothing of yet, its latest word of the agent (ready or off), else its latest. nil
--- before any.
function M.of(id, uri)
  local last = M.by_client[id]
  if not last or not M.about_document[last.state] or last.uri == uri then
    return last
  end
  local docs = M.by_uri[id] or {}
  -- Of another document, ready and off hold here too (the switch for every document); excluded
  -- and asking say nothing of this one.
  return docs[uri] or M.general[id] or last
end

return M
