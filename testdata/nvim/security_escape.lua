-- Headless Neovim end-to-end test of the URIs a hostile agent names (e2e/security_nvim_test.go):
-- the workspace holds a folder literally named "x?" and a file "x"; the agent (acp-test-agent
-- --answer) answers every request with an edit, a rename and a search-and-replace of
-- file://<workspace>/x?/../../outside/secret.txt, which URL parsing reads as <workspace>/x and
-- Neovim as a path through the "x?" folder, up and out, and one honest edit of the file x?/y.txt
-- (its "?" spelled %3F). The script asks for the code actions, applies every edit offered with
-- Neovim's own vim.lsp.util.apply_workspace_edit and writes every buffer, as a user who accepts
-- them all would; the Go test then reads the files on disk.
--
-- Environment: ACP_LSP_BRIDGE, ACP_TEST_AGENT, NVIM_TEST_DIR (the workspace), NVIM_TEST_LIB.
-- Output: "ACTIONS <titles>", "EDIT <uri>" per changed file, "FAIL <what>", then "ALL PASSED".

local api = vim.api
local T = dofile(os.getenv('NVIM_TEST_LIB'))
local check, wait_for = T.check, T.wait_for

local function write(path, text)
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

local outside = vim.fs.dirname(T.dir) .. '/outside/secret.txt'
write(outside, 'old secret\n')
write(T.dir .. '/x', 'old x\n')
write(T.dir .. '/x?/y.txt', 'old y\n')
write(T.dir .. '/main.txt', 'trigger here\n')

local escape = 'file://' .. T.dir .. '/x?/../../outside/secret.txt'
local honest = 'file://' .. T.dir .. '/x%3F/y.txt'
local function range(l1, c1, l2, c2)
  return { start = { line = l1, character = c1 }, ['end'] = { line = l2, character = c2 } }
end
local answer = T.dir .. '/answer.json'
write(answer, vim.json.encode({
  { kind = 'edit', id = 'escape-edit', uri = escape, edits = { { range = range(0, 0, 0, 3), newText = 'LEAKED' } } },
  { kind = 'rename', id = 'escape-rename', uri = escape, position = { line = 0, character = 1 }, newName = 'LEAKED' },
  { kind = 'searchAndReplace', id = 'escape-sar', uri = escape, search = 'old', replace = 'LEAKED' },
  { kind = 'edit', id = 'honest', uri = honest, edits = { { range = range(0, 0, 0, 3), newText = 'new' } } },
}))

T.run(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(T.dir .. '/main.txt'))
  local buf = api.nvim_get_current_buf()
  local id = T.start_bridge(buf, { os.getenv('ACP_TEST_AGENT'), '--answer', answer, '--log', T.agent_log })
  if not id then
    return
  end
  local client = assert(vim.lsp.get_client_by_id(id))
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  params.context = { diagnostics = {}, triggerKind = 1 }
  local result, done
  client:request('textDocument/codeAction', params, function(err, res)
    check(err == nil, 'codeAction: ' .. vim.inspect(err))
    result, done = res or {}, true
  end, buf)
  check(wait_for(function() return done end, 10000), 'no answer to textDocument/codeAction')
  T.out('ACTIONS ' .. vim.json.encode(vim.tbl_map(function(a) return a.title end, result or {})))
  for _, a in ipairs(result or {}) do
    if a.edit then
      for uri in pairs(a.edit.changes or {}) do
        T.out('EDIT ' .. uri)
      end
      vim.lsp.util.apply_workspace_edit(a.edit, client.offset_encoding)
    end
  end
  vim.cmd('silent! wall')
end)
