-- textDocument/copilotInlineEdit driven the way the Copilot NES plugins for Neovim drive it (see
-- COPILOT-NES.md): the bridge runs acp-test-agent with rules.
--
--   sidekick:     a client whose name contains "copilot", picked as sidekick does; the request
--                 with the buffer's version and context.triggerKind 2, positions in the
--                 negotiated encoding; the answer kept only if its textDocument.version is the
--                 buffer's version and its uri names the buffer; a request for an old version
--                 answers nothing; vim.lsp.util.apply_text_edits, then client:exec_cmd(command) in
--                 a later loop turn; the next request (sidekick sends one after each accept)
--                 answers {edits = {}}.
--   copilot-lsp:  (utf-16 run only: copilot-lsp.nvim always uses utf-16, and the guide makes the
--                 bridge negotiate it) didFocus for open and unknown uris, the request without
--                 context in utf-16, didShowInlineEdit {item = {command}}, apply in utf-16, then
--                 exec_cmd as editors/neovim/copilot-lsp.md's mapping does.
--   dismiss:      the dismiss mappings of editors/neovim/*.md: acp-lsp-bridge.reject with
--                 {uri = U} (sidekick.md), and with the id (copilot-lsp.md, utf-16 run); the agent
--                 gets nes/reject "rejected". The first request is for a buffer never changed
--                 (version 0).
--
-- Run by e2e/nvim_surfaces_test.go; see surfaces_lib.lua for the environment and the output.

local T = dofile(vim.fs.joinpath(vim.fs.dirname(vim.env.NVIM_TEST_SCRIPT), 'surfaces_lib.lua'))
local api = vim.api
local E = T.E_ACUTE
local METHOD = 'textDocument/copilotInlineEdit'

local rules = {
  { when = E .. ' + fo;', find = '日本語 + ' .. E .. ' + fo', replace = 'にほんご + ' .. E .. ' + foo(日本, 😀)' },
  { when = E .. ' := bar', find = '日本語 ' .. E .. ' := bar', replace = 'にほんご ' .. E .. ' := bar(😀)' },
  { when = '日本 y + ba;', find = 'ba', replace = 'bar(𐐀)' },
  { when = '日本 z + qu;', find = 'qu', replace = 'quux(𐐀)' },
}

local traffic

-- Sends a copilotInlineEdit request (no bufnr: both plugins call client:request that way) and
-- waits for its answer.
local function inline_edit(case, client, params)
  local n = #traffic[METHOD]
  client:request(METHOD, params, function() end)
  local rec = traffic[METHOD][n + 1]
  if not T.wait_for(function()
    return rec.done
  end, 8000) then
    T.fail(case, 'no answer to ' .. METHOD .. ' ' .. T.json(params))
    return nil
  end
  if rec.err then
    T.fail(case, METHOD .. ' answered an error: ' .. T.json(rec.err) .. ' for ' .. T.json(params))
    return nil
  end
  -- Both plugins index result.edits: a null result breaks copilot-lsp.nvim.
  if type(rec.result) ~= 'table' or type(rec.result.edits) ~= 'table' then
    T.fail(case, METHOD .. ' result must be {edits = [...]}, got ' .. T.json(rec.result))
    return nil
  end
  return rec.result
end

-- Types text at (row, byte col) without insert mode: a buffer change, hence a new version.
local function type_at(buf, row, col, text)
  api.nvim_buf_set_text(buf, row, col, row, col, { text })
  api.nvim_win_set_cursor(0, { row + 1, col })
end

local function wait_exec(case, n)
  if not T.wait_for(function()
    return traffic['workspace/executeCommand'][n] and traffic['workspace/executeCommand'][n].done
  end) then
    T.fail(case, 'workspace/executeCommand was not sent or not answered: ' .. T.json(traffic['workspace/executeCommand']))
    return nil
  end
  local ex = traffic['workspace/executeCommand'][n]
  if ex.err then
    T.fail(case, 'workspace/executeCommand answered an error: ' .. T.json(ex.err))
  end
  return ex
end

local function check_edit(case, edit, want)
  if type(edit) ~= 'table' then
    T.fail(case, 'no edit in the answer')
    return nil
  end
  local td = edit.textDocument or {}
  if td.uri ~= want.uri then
    T.fail(case, ('edit textDocument.uri %s, want %s'):format(T.json(td.uri), want.uri))
  end
  if td.version ~= want.version then
    T.fail(case, ('edit textDocument.version %s, want the request version %s'):format(T.json(td.version), T.json(want.version)))
  end
  if not vim.deep_equal(edit.range, want.range) then
    T.fail(case, ('edit range %s, want %s (%s)'):format(T.json(edit.range), T.json(want.range), want.enc))
  end
  if edit.text ~= want.text then
    T.fail(case, ('edit text %s, want %s'):format(T.json(edit.text), T.json(want.text)))
  end
  local cmd = edit.command
  local id = type(cmd) == 'table' and type(cmd.arguments) == 'table' and cmd.arguments[1] or nil
  if type(cmd) ~= 'table' or cmd.command ~= T.ACCEPT or type(id) ~= 'string' or id == '' then
    T.fail(case, ('edit command %s, want {command=%q, arguments={<suggestion id>}}'):format(T.json(cmd), T.ACCEPT))
    return nil
  end
  return id
end

local function sidekick_case(client)
  local case = 'sidekick-' .. T.enc
  local failures_before = #T.failures
  local path = T.dir .. '/sidekick.txt'
  local buf = T.open(path, { '// 𐐀 日本語 ' .. E, 'let 𐐀 = 日本語 + ' .. E .. ' + f; // 終', 'end 😀' }, client)
  local line = api.nvim_buf_get_lines(buf, 1, 2, true)[1]
  type_at(buf, 1, assert(line:find('+ f;', 1, true)) + 2, 'o')
  local typed = api.nvim_buf_get_lines(buf, 1, 2, true)[1]

  -- sidekick's Config.get_client(buf): the first client on the buffer whose name contains "copilot".
  local picked = vim.tbl_filter(function(c)
    return c.name:lower():find('copilot') ~= nil
  end, vim.lsp.get_clients({ bufnr = buf }))[1]
  if not picked or picked.id ~= client.id then
    T.fail(case, 'sidekick would not pick the bridge: clients ' .. T.json(vim.tbl_map(function(c)
      return c.name
    end, vim.lsp.get_clients({ bufnr = buf }))))
    return
  end

  -- sidekick's M.update().
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local version = vim.lsp.util.buf_versions[buf]
  params.textDocument.version = version
  params.context = { triggerKind = 2 }
  local res = inline_edit(case, client, params)
  if not res then
    return
  end
  T.out(('INFO %s: request %s -> %s'):format(case, T.json(params), T.json(res)))
  if #res.edits ~= 1 then
    T.fail(case, 'want exactly one edit, got ' .. T.json(res.edits))
    return
  end
  local edit = res.edits[1]
  local id = check_edit(case, edit, {
    uri = params.textDocument.uri,
    version = version,
    range = T.range_of(typed, 1, '日本語 + ' .. E .. ' + fo', nil, T.enc),
    text = rules[1].replace,
    enc = T.enc,
  })
  if not id then
    return
  end
  -- sidekick's NesEdit:valid(): the uri names a loaded buffer, the version is the buffer's.
  local ebuf = vim.fn.bufnr(vim.uri_to_fname(edit.textDocument.uri), false)
  if ebuf ~= buf then
    T.fail(case, ('sidekick would show the edit in buffer %d, not %d (uri %s)'):format(ebuf, buf, edit.textDocument.uri))
  end
  if edit.textDocument.version ~= vim.lsp.util.buf_versions[buf] then
    T.fail(case, ('sidekick would drop the edit: version %s, buffer version %s'):format(T.json(edit.textDocument.version), vim.lsp.util.buf_versions[buf]))
  end

  -- A request for a version the bridge does not have answers nothing (and does not end the live
  -- suggestion: it is accepted below).
  local old = vim.deepcopy(params)
  old.textDocument.version = version - 1
  local stale = inline_edit(case, client, old)
  if stale and #stale.edits ~= 0 then
    T.fail(case, 'a request for version ' .. (version - 1) .. ' (current ' .. version .. ') must answer {edits = {}}, got ' .. T.json(stale))
  end

  -- sidekick's M.apply(): apply the text edits, then run the commands in a later loop turn.
  local n_exec = #traffic['workspace/executeCommand']
  vim.schedule(function()
    vim.lsp.util.apply_text_edits({ { range = edit.range, newText = edit.text } }, buf, client.offset_encoding)
    vim.schedule(function()
      client:exec_cmd(edit.command, { bufnr = buf })
    end)
  end)
  local ex = wait_exec(case, n_exec + 1)
  if ex and (ex.params.command ~= T.ACCEPT or not vim.deep_equal(ex.params.arguments, { id })) then
    T.fail(case, 'workspace/executeCommand params ' .. T.json(ex.params))
  end
  local want = { '// 𐐀 日本語 ' .. E, 'let 𐐀 = にほんご + ' .. E .. ' + foo(日本, 😀); // 終', 'end 😀' }
  local now = api.nvim_buf_get_lines(buf, 0, -1, true)
  if not vim.deep_equal(now, want) then
    T.fail(case, ('buffer after apply: got %s, want %s'):format(T.json(now), T.json(want)))
  end
  T.expect_accept(case, id)

  -- sidekick asks again after each accept (User SidekickNesDone): nothing to suggest now, and the
  -- answer is still {edits = []}.
  local p2 = vim.lsp.util.make_position_params(0, client.offset_encoding)
  p2.textDocument.version = vim.lsp.util.buf_versions[buf]
  p2.context = { triggerKind = 2 }
  local again = inline_edit(case, client, p2)
  if again and #again.edits ~= 0 then
    T.fail(case, 'after the accept nothing matches, want {edits = {}}, got ' .. T.json(again))
  end
  if #T.failures == failures_before then
    T.out(('CASE %s ok %s'):format(case, id))
  end
end

local function copilot_lsp_case(client)
  local case = 'copilot-lsp'
  local failures_before = #T.failures
  local path = T.dir .. '/copilotlsp.txt'
  local buf = T.open(path, { '日本 ' .. E, '𐐀 日本語 ' .. E .. ' := ba', '😀 end' }, client)
  local uri = vim.uri_from_bufnr(buf)

  -- didFocus as both plugins send it, also for buffers the server does not know (copilot-lsp.nvim
  -- sends it on every BufEnter, attached or not, unnamed buffers included).
  client:notify('textDocument/didFocus', { textDocument = { uri = uri } })
  client:notify('textDocument/didFocus', { textDocument = { uri = 'file://' } })
  client:notify('textDocument/didFocus', { textDocument = { uri = vim.uri_from_fname(T.dir .. '/not-open.txt') } })

  local line = api.nvim_buf_get_lines(buf, 1, 2, true)[1]
  type_at(buf, 1, #line, 'r')
  api.nvim_win_set_cursor(0, { 2, #line })
  local typed = api.nvim_buf_get_lines(buf, 1, 2, true)[1]

  -- copilot-lsp.nvim's request_nes(): utf-16 whatever was negotiated, no context.
  local params = vim.lsp.util.make_position_params(0, 'utf-16')
  local version = vim.lsp.util.buf_versions[buf]
  params.textDocument.version = version
  local res = inline_edit(case, client, params)
  if not res then
    return
  end
  T.out(('INFO %s: request %s -> %s'):format(case, T.json(params), T.json(res)))
  if #res.edits ~= 1 then
    T.fail(case, 'want exactly one edit, got ' .. T.json(res.edits))
    return
  end
  local edit = res.edits[1]
  local id = check_edit(case, edit, {
    uri = uri,
    version = version,
    range = T.range_of(typed, 1, '日本語 ' .. E .. ' := bar', nil, 'utf-16'),
    text = rules[2].replace,
    enc = 'utf-16',
  })
  if not id then
    return
  end
  -- handle_nes_response(): newText = text, then didShowInlineEdit with the first edit's command.
  edit.newText = edit.text
  client:notify('textDocument/didShowInlineEdit', { item = { command = res.edits[1].command } })

  -- apply_pending_nes(): apply_text_edits in utf-16 in the buffer the uri names; then the
  -- guide's mapping runs the command.
  local target = vim.uri_to_bufnr(edit.textDocument.uri)
  if target ~= buf then
    T.fail(case, ('copilot-lsp.nvim would apply to buffer %d, not %d'):format(target, buf))
  end
  local n_exec = #traffic['workspace/executeCommand']
  vim.schedule(function()
    vim.lsp.util.apply_text_edits({ edit }, target, 'utf-16')
    vim.schedule(function()
      client:exec_cmd(edit.command, { bufnr = buf })
    end)
  end)
  local ex = wait_exec(case, n_exec + 1)
  if ex and (ex.params.command ~= T.ACCEPT or not vim.deep_equal(ex.params.arguments, { id })) then
    T.fail(case, 'workspace/executeCommand params ' .. T.json(ex.params))
  end
  local want = { '日本 ' .. E, '𐐀 にほんご ' .. E .. ' := bar(😀)', '😀 end' }
  local now = api.nvim_buf_get_lines(buf, 0, -1, true)
  if not vim.deep_equal(now, want) then
    T.fail(case, ('buffer after apply: got %s, want %s'):format(T.json(now), T.json(want)))
  end
  T.expect_accept(case, id)
  if #T.failures == failures_before then
    T.out(('CASE %s ok %s'):format(case, id))
  end
end

-- Asks for a suggestion in a fresh buffer, then dismisses it with acp-lsp-bridge.reject and `arg`
-- as the guide's mapping does.
local function dismiss_case(client, case, file, line, rule, arg)
  local failures_before = #T.failures
  local buf = T.open(T.dir .. '/' .. file, { line, 'end' }, client)
  api.nvim_win_set_cursor(0, { 1, 0 })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local version = vim.lsp.util.buf_versions[buf]
  params.textDocument.version = version
  params.context = { triggerKind = 2 }
  local res = inline_edit(case, client, params)
  if not res then
    return
  end
  if #res.edits ~= 1 then
    T.fail(case, 'want exactly one edit, got ' .. T.json(res.edits))
    return
  end
  local id = check_edit(case, res.edits[1], {
    uri = params.textDocument.uri,
    version = version,
    range = T.range_of(line, 0, rule.find, nil, client.offset_encoding),
    text = rule.replace,
    enc = client.offset_encoding,
  })
  if not id then
    return
  end
  local n_exec = #traffic['workspace/executeCommand']
  client:exec_cmd({ title = 'Dismiss next edit', command = T.REJECT, arguments = { arg(buf, id) } }, { bufnr = buf })
  wait_exec(case, n_exec + 1)
  T.expect_reject(case, id, 'rejected')
  if not vim.deep_equal(api.nvim_buf_get_lines(buf, 0, -1, true), { line, 'end' }) then
    T.fail(case, 'the buffer changed: ' .. T.json(api.nvim_buf_get_lines(buf, 0, -1, true)))
  end
  if #T.failures == failures_before then
    T.out(('INFO %s: %s rejected'):format(case, id))
  end
end

T.run(function()
  local rules_file = T.dir .. '/rules.json'
  T.write_file(rules_file, { vim.json.encode(rules) })
  T.open(T.dir .. '/start.txt', { 'nothing to see here' })
  -- A name containing "copilot", as sidekick.nvim requires.
  local client = T.start_client('setup', 'copilot-acp', { '--rules', rules_file })
  if not client then
    return
  end
  traffic = T.record(client, { METHOD, 'workspace/executeCommand' })
  sidekick_case(client)
  dismiss_case(client, 'dismiss-uri', 'dismiss1.txt', '😀 日本 y + ba;', rules[3], function(buf)
    return { uri = vim.uri_from_bufnr(buf) }
  end)
  if T.enc == 'utf-16' then
    copilot_lsp_case(client)
    dismiss_case(client, 'dismiss-id', 'dismiss2.txt', '😀 日本 z + qu;', rules[4], function(_, id)
      return id
    end)
  end
end)
