-- What the quieter display's scripts (plugin_mark.lua, plugin_mark_delay.lua) share: main.go, and
-- the test agent that always suggests the same edit, two lines below where the user types
-- ("// todo" → "// done").
--
--   local mark = dofile(vim.fs.dirname(os.getenv('NVIM_TEST_LIB')) .. '/mark_lib.lua')(T)
--   mark.path, mark.text: main.go and the text to open it with; mark.agent: the agent's command.

return function(T)
  local M = {
    path = T.dir .. '/main.go',
    text = 'package main\n\nfunc f() error {\n\tx := 1\n\t\n\t// todo\n}\n',
  }
  local answer = T.dir .. '/answer.json'
  local f = assert(io.open(answer, 'w'))
  f:write(vim.json.encode({ {
    kind = 'edit',
    id = 'far',
    uri = vim.uri_from_fname(M.path),
    edits = { { range = { start = { line = 5, character = 4 }, ['end'] = { line = 5, character = 8 } }, newText = 'done' } },
  } }))
  f:close()
  M.agent = { os.getenv('ACP_TEST_AGENT'), '--answer', answer, '--log', T.agent_log }
  return M
end
