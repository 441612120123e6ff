-- The bridge's code actions through Neovim's own path, vim.lsp.buf.code_action({apply = true,
-- filter = ...}): Neovim applies the action's WorkspaceEdit with util.apply_workspace_edit, then
-- runs its command with client:exec_cmd (lsp/buf.lua:1258-1268); the bridge then sends nes/accept
-- and, for another file or a jump, window/showDocument, which Neovim's handler follows. The
-- agent is e2e's scripted agent (the test agent with a Suggest hook), answering for main.txt an
-- edit of other.txt (on disk only) and an edit of open.txt (open, with unsaved changes), then a
-- search-and-replace in the folder sr/ (two text files, one open with unsaved changes; a .git
-- folder and a binary file that must be left alone), and for jump.txt a jump into target.txt (on
-- disk only).
--
-- Run by e2e/nvim_surfaces_test.go; see surfaces_lib.lua for the environment and the output.

local T = dofile(vim.fs.joinpath(vim.fs.dirname(vim.env.NVIM_TEST_SCRIPT), 'surfaces_lib.lua'))
local api = vim.api
local E = T.E_ACUTE

local function path(name)
  return T.dir .. '/' .. name
end

local files = {
  main = { 'main.txt', { '// 日本語 ' .. E .. ' 𐐀', 'call 𐐀 := helper(日本); // trigger-other', 'end 😀 // trigger-replace' } },
  other = { 'other.txt', { 'package 日本', '', 'func 😀() { helper(x 日本) } // ' .. E, 'end' } },
  -- open.txt on disk; the buffer gets an extra first line that is never written.
  open = { 'open.txt', { 'var 𐐀 = 0', 'count := 𐐀 + 1', 'done' } },
  jump = { 'jump.txt', { '𐐀 日本語 ' .. E, 'see 😀 here: trigger-jump' } },
  target = { 'target.txt', { 'first 日本', '😀 𐐀 ' .. E .. ' TARGET here', 'last' } },
}

local script = {
  {
    when = 'trigger-other',
    suggest = {
      { kind = 'edit', file = 'other.txt', find = 'helper(x 日本)', replace = 'helper(x 日本, 😀 ' .. E .. ')' },
      { kind = 'edit', file = 'open.txt', find = 'count := 𐐀 + 1', replace = 'count := 𐐀 + 2 // 終' },
    },
  },
  { when = 'trigger-jump', suggest = { { kind = 'jump', file = 'target.txt', find = 'TARGET' } } },
  { when = 'trigger-replace', suggest = { { kind = 'searchAndReplace', file = 'sr', find = 'ΩMARK', replace = 'ωmark 😀' } } },
}

local traffic
local shown = {} -- window/showDocument params, in order
local notes = {} -- vim.notify messages

-- Runs vim.lsp.buf.code_action({apply = true}) keeping exactly the actions `pick` accepts, and
-- returns the offered actions, the picked one and the executeCommand record.
local function run_action(case, client, pick)
  local offered = {}
  local picked
  local n_exec = #traffic['workspace/executeCommand']
  local n_notes = #notes
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(a, client_id)
      if client_id ~= client.id then
        return false
      end
      table.insert(offered, a)
      if pick(a) then
        picked = a
        return true
      end
      return false
    end,
  })
  local rec
  local ok = T.wait_for(function()
    rec = traffic['workspace/executeCommand'][n_exec + 1]
    return (rec and rec.done) or #notes > n_notes
  end, 8000)
  T.out(('INFO %s: offered %s'):format(case, T.json(offered)))
  if not ok or not rec then
    T.fail(
      case,
      ('the code action was not applied (no workspace/executeCommand); offered: %s; messages: %s; codeAction traffic: %s'):format(
        T.json(offered),
        T.json(vim.list_slice(notes, n_notes + 1)),
        T.json(traffic['textDocument/codeAction'])
      )
    )
    return offered, picked, nil
  end
  if rec.err then
    T.fail(case, 'workspace/executeCommand answered an error: ' .. T.json(rec.err))
  end
  return offered, picked, rec
end

local function accept_id(case, action, rec)
  local cmd = type(action) == 'table' and action.command or nil
  local id = type(cmd) == 'table' and type(cmd.arguments) == 'table' and cmd.arguments[1] or nil
  if type(cmd) ~= 'table' or cmd.command ~= T.ACCEPT or type(id) ~= 'string' then
    T.fail(case, ('action command %s, want {command=%q, arguments={<id>}}'):format(T.json(cmd), T.ACCEPT))
    return nil
  end
  if rec and (rec.params.command ~= T.ACCEPT or not vim.deep_equal(rec.params.arguments, { id })) then
    T.fail(case, 'workspace/executeCommand params ' .. T.json(rec.params))
  end
  return id
end

-- Waits for the bridge's window/showDocument number n and checks that Neovim followed it: the
-- current buffer is `file`, the cursor at the first occurrence of `at` on line `row` (1-based).
local function expect_cursor(case, n, file, row, at)
  if not T.wait_for(function()
    return shown[n] ~= nil and api.nvim_buf_get_name(0) == path(file)
  end) then
    T.fail(case, ('no window/showDocument to %s followed (showDocument requests: %s; current buffer %s)'):format(file, T.json(shown), api.nvim_buf_get_name(0)))
    return
  end
  T.sleep(20)
  local line = api.nvim_buf_get_lines(0, row - 1, row, true)[1]
  local col = assert(line:find(at, 1, true), at .. ' not in ' .. line) - 1
  local cur = api.nvim_win_get_cursor(0)
  if cur[1] ~= row or cur[2] ~= col then
    T.fail(
      case,
      ('cursor at %d:%d (byte), want %d:%d, the start of %q in %q; window/showDocument %s'):format(cur[1], cur[2], row, col, at, line, T.json(shown[n]))
    )
  end
  local sel = shown[n].selection
  local want = { line = row - 1, character = vim.str_utfindex(line, T.enc, col, false) }
  if type(sel) ~= 'table' or not vim.deep_equal(sel.start, want) or not vim.deep_equal(sel['end'], want) then
    T.fail(case, ('window/showDocument selection %s, want start = end = %s (%s)'):format(T.json(sel), T.json(want), T.enc))
  end
  if shown[n].takeFocus ~= true then
    T.fail(case, 'window/showDocument without takeFocus = true: ' .. T.json(shown[n]))
  end
end

local function other_file_cases(client, main_buf, open_buf)
  -- (1) An edit of other.txt, which Neovim does not have open: the action's WorkspaceEdit loads it
  -- into a buffer and edits it; the accept moves the cursor there.
  local case = 'other-file-not-open'
  local failures_before = #T.failures
  local other_uri = vim.uri_from_fname(path('other.txt'))
  api.nvim_set_current_buf(main_buf)
  api.nvim_win_set_cursor(0, { 2, 5 })
  local n_shown = #shown
  local _, picked, rec = run_action(case, client, function(a)
    return type(a.edit) == 'table' and type(a.edit.changes) == 'table' and a.edit.changes[other_uri] ~= nil
  end)
  local id = picked and accept_id(case, picked, rec)
  if picked then
    if type(picked.title) ~= 'string' or picked.title == '' then
      T.fail(case, 'action without a title: ' .. T.json(picked))
    end
    if vim.tbl_count(picked.edit.changes) ~= 1 then
      T.fail(case, 'the edit should change only other.txt: ' .. T.json(picked.edit))
    end
  end
  local other_buf = vim.fn.bufnr(path('other.txt'))
  local want_other = { 'package 日本', '', 'func 😀() { helper(x 日本, 😀 ' .. E .. ') } // ' .. E, 'end' }
  if other_buf == -1 then
    T.fail(case, 'other.txt was not loaded into a buffer')
  else
    local now = api.nvim_buf_get_lines(other_buf, 0, -1, true)
    if not vim.deep_equal(now, want_other) then
      T.fail(case, ('other.txt after the action: got %s, want %s'):format(T.json(now), T.json(want_other)))
    end
  end
  local want_main = files.main[2]
  if not vim.deep_equal(api.nvim_buf_get_lines(main_buf, 0, -1, true), want_main) then
    T.fail(case, 'main.txt changed: ' .. T.json(api.nvim_buf_get_lines(main_buf, 0, -1, true)))
  end
  if rec then
    expect_cursor(case, n_shown + 1, 'other.txt', 3, 'helper(x')
  end
  if id then
    T.expect_accept(case, id)
  end
  if id and #T.failures == failures_before then
    T.out(('CASE %s ok %s'):format(case, id))
  end

  -- (2) An edit of open.txt, open with unsaved changes: the range must be on the buffer's text
  -- (line 3 there, line 2 on disk). Asked again from main.txt: the same agent answer.
  case = 'other-file-open'
  failures_before = #T.failures
  local open_uri = vim.uri_from_fname(path('open.txt'))
  api.nvim_set_current_buf(main_buf)
  api.nvim_win_set_cursor(0, { 2, 5 })
  n_shown = #shown
  _, picked, rec = run_action(case, client, function(a)
    return type(a.edit) == 'table' and type(a.edit.changes) == 'table' and a.edit.changes[open_uri] ~= nil
  end)
  id = picked and accept_id(case, picked, rec)
  local want_open = { '// 日本語 ' .. E .. ' unsaved 😀', 'var 𐐀 = 0', 'count := 𐐀 + 2 // 終', 'done' }
  local now = api.nvim_buf_get_lines(open_buf, 0, -1, true)
  if not vim.deep_equal(now, want_open) then
    T.fail(case, ('open.txt after the action: got %s, want %s'):format(T.json(now), T.json(want_open)))
  end
  if rec then
    expect_cursor(case, n_shown + 1, 'open.txt', 3, 'count')
  end
  if id then
    T.expect_accept(case, id)
  end

  -- Both files, written: what the user gets on disk after :wall.
  vim.cmd('silent wall')
  for _, f in ipairs({ { 'other.txt', want_other }, { 'open.txt', want_open }, { 'main.txt', want_main } }) do
    local disk = T.read_lines(path(f[1]))
    if not vim.deep_equal(disk, f[2]) then
      T.fail(case, ('%s on disk after :wall: got %s, want %s'):format(f[1], T.json(disk), T.json(f[2])))
    end
  end
  if id and #T.failures == failures_before then
    T.out(('CASE %s ok %s'):format(case, id))
  end
end

local function search_replace_case(client, main_buf)
  local case = 'search-replace-folder'
  local failures_before = #T.failures
  vim.fn.mkdir(path('sr/.git'), 'p')
  T.write_file(path('sr/a.txt'), { 'α ΩMARK 日本', 'x ΩMARK' })
  T.write_file(path('sr/b.txt'), { '😀 b' })
  T.write_file(path('sr/.git/config'), { 'ΩMARK' })
  local f = assert(io.open(path('sr/bin.dat'), 'wb'))
  f:write('ΩMARK\0\1\2\255')
  f:close()
  -- b.txt open, with an unsaved line that has a match.
  local b_buf = T.open(path('sr/b.txt'), nil, client)
  api.nvim_buf_set_lines(b_buf, 1, 1, true, { E .. ' ΩMARK 終' })
  T.sleep(300)
  api.nvim_set_current_buf(main_buf)
  api.nvim_win_set_cursor(0, { 3, 0 })
  local a_uri, b_uri = vim.uri_from_fname(path('sr/a.txt')), vim.uri_from_fname(path('sr/b.txt'))
  local _, picked, rec = run_action(case, client, function(a)
    return type(a.edit) == 'table' and type(a.edit.changes) == 'table' and a.edit.changes[a_uri] ~= nil
  end)
  local id = picked and accept_id(case, picked, rec)
  if picked then
    local keys = vim.tbl_keys(picked.edit.changes)
    table.sort(keys)
    if not vim.deep_equal(keys, { a_uri, b_uri }) then
      T.fail(case, 'the edit should change exactly sr/a.txt and sr/b.txt: ' .. T.json(keys))
    end
    if not (type(picked.title) == 'string' and picked.title:find('3 matches in 2 files', 1, true)) then
      T.fail(case, 'title should say 3 matches in 2 files: ' .. T.json(picked.title))
    end
  end
  local want_a = { 'α ωmark 😀 日本', 'x ωmark 😀' }
  local want_b = { '😀 b', E .. ' ωmark 😀 終' }
  local a_buf = vim.fn.bufnr(path('sr/a.txt'))
  local got_a = a_buf ~= -1 and api.nvim_buf_get_lines(a_buf, 0, -1, true) or nil
  if not vim.deep_equal(got_a, want_a) then
    T.fail(case, ('sr/a.txt after the action: got %s, want %s'):format(T.json(got_a), T.json(want_a)))
  end
  local got_b = api.nvim_buf_get_lines(b_buf, 0, -1, true)
  if not vim.deep_equal(got_b, want_b) then
    T.fail(case, ('sr/b.txt after the action: got %s, want %s'):format(T.json(got_b), T.json(want_b)))
  end
  if vim.fn.bufnr(path('sr/.git/config')) ~= -1 or vim.fn.bufnr(path('sr/bin.dat')) ~= -1 then
    T.fail(case, 'sr/.git/config or sr/bin.dat was touched')
  end
  if id then
    T.expect_accept(case, id)
  end
  if id and #T.failures == failures_before then
    T.out(('CASE %s ok %s'):format(case, id))
  end
end

local function jump_case(client)
  local case = 'jump'
  local failures_before = #T.failures
  local buf = T.open(path('jump.txt'), nil, client)
  api.nvim_win_set_cursor(0, { 2, 3 })
  local n_shown = #shown
  local _, picked, rec = run_action(case, client, function(a)
    return a.edit == nil and type(a.command) == 'table' and a.command.command == T.ACCEPT
  end)
  local id = picked and accept_id(case, picked, rec)
  if picked and not (type(picked.title) == 'string' and picked.title:find('target.txt', 1, true)) then
    T.fail(case, 'jump action title should name target.txt: ' .. T.json(picked.title))
  end
  if rec then
    expect_cursor(case, n_shown + 1, 'target.txt', 2, 'TARGET')
  end
  if not vim.deep_equal(api.nvim_buf_get_lines(buf, 0, -1, true), files.jump[2]) then
    T.fail(case, 'jump.txt changed: ' .. T.json(api.nvim_buf_get_lines(buf, 0, -1, true)))
  end
  if id then
    T.expect_accept(case, id)
  end
  if id and #T.failures == failures_before then
    T.out(('CASE %s ok %s'):format(case, id))
  end
end

T.run(function()
  for _, f in pairs(files) do
    T.write_file(path(f[1]), f[2])
  end
  local script_file = path('script.json')
  T.write_file(script_file, { vim.json.encode(script) })

  -- A prompt would block the headless editor: every action must be picked by the filter.
  vim.ui.select = function(items)
    T.fail('ui', 'vim.ui.select was called (the filter left ' .. #items .. ' actions): ' .. T.json(items))
  end
  local orig_notify = vim.notify
  vim.notify = function(msg, level, opts)
    table.insert(notes, msg)
    T.out('INFO notify: ' .. tostring(msg))
    return orig_notify(msg, level, opts)
  end
  local orig_show = vim.lsp.handlers['window/showDocument']
  vim.lsp.handlers['window/showDocument'] = function(err, params, ctx)
    table.insert(shown, vim.deepcopy(params))
    return orig_show(err, params, ctx)
  end

  -- open.txt: open and attached, with an unsaved first line.
  local open_buf = T.open(path('open.txt'))
  local client = T.start_client('setup', 'acp-lsp-bridge', { '--script', script_file })
  if not client then
    return
  end
  traffic = T.record(client, { 'textDocument/codeAction', 'workspace/executeCommand' })
  api.nvim_buf_set_lines(open_buf, 0, 0, true, { '// 日本語 ' .. E .. ' unsaved 😀' })
  T.sleep(300) -- Neovim sends the didChange after its 150 ms debounce
  local main_buf = T.open(path('main.txt'), nil, client)

  other_file_cases(client, main_buf, open_buf)
  search_replace_case(client, main_buf)
  jump_case(client)
end)
