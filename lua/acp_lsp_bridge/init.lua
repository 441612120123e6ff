-- acp-lsp-bridge for Neovim: the opt-in part of the plugin (see :help acp_lsp_bridge).
--
-- lsp/acp.lua alone gives the language server config (vim.lsp.enable('acp')). setup() adds what
-- Neovim does not do by itself: keys to accept, dismiss and ask for a suggestion, the focus and
-- diagnostics notifications the bridge passes on to agents that ask for them, and a statusline
-- hint. Nothing here runs until setup() is called.

local M = {}

local api = vim.api

-- Every option, with its default. Keys set to false are not mapped.
local defaults = {
  -- the ACP agent and its arguments, e.g. { 'my-nes-agent', '--acp' }; nil: built-in. A short
  -- name instead of a list: 'copilot', GitHub Copilot's language server (acp-lsp-bridge --agent
  -- copilot)
  agent = nil,
  -- instead of agent: the bridge's own agent with a model (acp-lsp-bridge agent --model-url URL
  -- --model NAME --model-format FORMAT ...), e.g. llama.vim's setup: { url =
  -- 'http://127.0.0.1:8012', name = 'qwen2.5-coder-1.5b', format = 'fim' }; the fields url, name,
  -- format, server, api_key_env (--model-url, --model, --model-format, --model-server,
  -- --api-key-env) and args (the agent's other flags, a list)
  model = nil,
  bridge = 'acp-lsp-bridge', -- the bridge on the PATH, or its path
  log_file = vim.fn.stdpath('log') .. '/acp-lsp-bridge.log', -- false: stderr (Neovim's LSP log)
  filetypes = nil, -- nil: every file type
  -- how an agent without Next Edit Suggestions (a coding agent: Codex, Claude, Gemini) is asked,
  -- through prompts: 'explicit' only when you ask (<M-CR>, code actions), 'auto' also while you
  -- type (ghost text), 'off' never
  prompts = 'explicit',
  -- globs of files never sent to the agent, besides the bridge's defaults (.env, .env.*, *.pem,
  -- *.key, id_rsa*, .ssh/**, ...), matched at any depth: e.g. { 'secrets/**', '*.local' }
  exclude = {},
  default_excludes = true, -- false: the defaults keep nothing back
  -- milliseconds the buffer must be still (no typing, no cursor move) before the agent is asked
  -- while you type; what you ask for (<M-CR>, code actions) goes at once. nil: the bridge's
  -- default, none for an NES agent, 600 for an agent asked through prompts; 150-300 suits a local
  -- model
  delay = nil,
  -- milliseconds the bridge waits for a suggestion (prompt_timeout: from an agent asked through
  -- prompts) before the request comes back empty; nil: the bridge's, 10000 (30000). The bridge
  -- says when three in a row time out
  suggest_timeout = nil,
  prompt_timeout = nil,
  automatic = true, -- false: start with suggestions while typing off (:AcpLspBridge enable)
  -- 'ghost': suggestions on the cursor's line appear as ghost text as you type. 'mark': quieter,
  -- a sign at the suggestion's line and an end-of-line hint ("⇥ next edit, line 42") first, for
  -- a suggestion anywhere in the buffer; keys.reveal jumps to it, then shows it; keys.accept takes it
  display = 'ghost',
  keys = {
    accept = '<Tab>', -- insert: accept the ghost text
    accept_word = '<M-Right>', -- insert: accept its next word; the rest stays shown
    accept_line = '<M-C-Right>', -- insert: accept its next line; the rest stays shown
    reveal = '<M-n>', -- insert and normal, display = 'mark': go to the marked suggestion, then show it
    next = '<M-]>', -- insert: show the next of the agent's alternatives
    prev = '<M-[>', -- insert: show the previous one
    dismiss = '<C-]>', -- insert: hide it and tell the agent (nes/reject "rejected")
    suggest = '<M-CR>', -- insert and normal: ask the agent now (trigger "manual")
    code_actions = '<leader>na', -- normal: code actions, where every kind of suggestion is offered
  },
  focus = true, -- tell the bridge which buffer you enter, the cursor and the visible lines
  diagnostics = true, -- tell the bridge which diagnostics Neovim shows, from every server
}

--- The options setup() was last called with, defaults filled in; nil before setup().
M.options = nil

local function fail(msg)
  error('acp_lsp_bridge.setup: ' .. msg, 0)
end

-- The agents the bridge knows by a short name: agent = NAME starts acp-lsp-bridge --agent NAME,
-- and the bridge knows the command and its environment. Any other string is a command, as before.
local short_agents = {
  copilot = true, -- GitHub Copilot's language server: copilot-language-server --acp, started quickly
}

-- check refuses what would otherwise fail later and far from the cause: a misspelt option, a
-- key name, an agent given as one string with spaces (the bridge never runs a shell).
local function check(opts)
  for k in pairs(opts) do
    local optional = { agent = true, model = true, filetypes = true, delay = true, suggest_timeout = true, prompt_timeout = true }
    if defaults[k] == nil and not optional[k] then
      fail(('unknown option %q; the options are agent, model, bridge, log_file, filetypes, prompts, exclude, default_excludes, delay, suggest_timeout, prompt_timeout, automatic, display, keys, focus, diagnostics'):format(k))
    end
  end
  if opts.model ~= nil then
    local m = opts.model
    if type(m) ~= 'table' then
      fail('model must be a table, e.g. { url = "http://127.0.0.1:8012", name = "qwen2.5-coder-1.5b", format = "fim" }')
    end
    if opts.agent ~= nil then
      fail('give agent or model, not both: model runs the bridge\'s own agent (acp-lsp-bridge agent) with a model')
    end
    local fields = { url = true, name = true, format = true, server = true, api_key_env = true, args = true }
    for k, v in pairs(m) do
      if not fields[k] then
        fail(('model: unknown field %q; the fields are url, name, format, server, api_key_env, args'):format(tostring(k)))
      end
      if k ~= 'args' and (type(v) ~= 'string' or v == '') then
        fail(('model.%s must be a string'):format(k))
      end
    end
    if m.args ~= nil and (type(m.args) ~= 'table' or not vim.iter(m.args):all(function(a) return type(a) == 'string' end)) then
      fail('model.args must be a list of the agent\'s other flags, e.g. { "--timeout", "5s" }')
    end
    local hosted = { codestral = true, mercury = true, ['sweep-api'] = true }
    if m.url == nil and not hosted[m.format] then
      fail('model.url is needed (the model\'s server, e.g. "http://127.0.0.1:8012"), but for the hosted formats codestral, mercury, sweep-api')
    end
  end
  -- A short name stays a string (build_cmd gives it to --agent); any other string is a command.
  if type(opts.agent) == 'string' and not short_agents[opts.agent] then
    if opts.agent:find('%s') then
      local words = vim.split(opts.agent, '%s+', { trimempty = true })
      local quoted = vim.tbl_map(function(w) return ("'%s'"):format(w) end, words)
      fail(('agent = %q: give the command and its arguments as a list, e.g. { %s }'):format(opts.agent, table.concat(quoted, ', ')))
    end
    opts.agent = { opts.agent }
  end
  if opts.agent ~= nil and type(opts.agent) ~= 'string' and (type(opts.agent) ~= 'table' or #opts.agent == 0) then
    fail('agent must be a list: the command and its arguments, e.g. { "my-nes-agent", "--acp" }, or "copilot" for GitHub Copilot; leave it out for the built-in agent')
  end
  if type(opts.bridge) ~= 'string' or opts.bridge == '' then
    fail('bridge must be the name or path of the acp-lsp-bridge executable')
  end
  if opts.log_file ~= false and type(opts.log_file) ~= 'string' then
    fail('log_file must be a path, or false to log to stderr')
  end
  if opts.filetypes ~= nil and type(opts.filetypes) ~= 'table' then
    fail('filetypes must be a list of file types, e.g. { "go", "lua" }; leave it out for every file')
  end
  if opts.prompts ~= 'explicit' and opts.prompts ~= 'auto' and opts.prompts ~= 'off' then
    fail(('prompts = %s: want "explicit" (the default), "auto" or "off"'):format(vim.inspect(opts.prompts)))
  end
  if type(opts.exclude) ~= 'table' or not vim.iter(opts.exclude):all(function(g) return type(g) == 'string' end) then
    fail('exclude must be a list of globs, e.g. { "secrets/**", "*.local" }')
  end
  if type(opts.default_excludes) ~= 'boolean' then
    fail('default_excludes must be true or false')
  end
  if opts.delay ~= nil and (type(opts.delay) ~= 'number' or opts.delay < 0 or opts.delay > 60000) then
    fail(('delay = %s: want milliseconds from 0 to 60000, e.g. 250; leave it out for the bridge\'s default'):format(vim.inspect(opts.delay)))
  end
  for _, k in ipairs({ 'suggest_timeout', 'prompt_timeout' }) do
    local v = opts[k]
    if v ~= nil and (type(v) ~= 'number' or v < 100 or v > 600000) then
      fail(('%s = %s: want milliseconds from 100 to 600000, e.g. 30000; leave it out for the bridge\'s default'):format(k, vim.inspect(v)))
    end
  end
  if type(opts.automatic) ~= 'boolean' then
    fail('automatic must be true or false')
  end
  if opts.display ~= 'ghost' and opts.display ~= 'mark' then
    fail(('display = %s: want "ghost" (the default) or "mark"'):format(vim.inspect(opts.display)))
  end
  for k, v in pairs(opts.keys) do
    if defaults.keys[k] == nil then
      fail(('unknown key %q; the keys are accept, accept_word, accept_line, reveal, next, prev, dismiss, suggest, code_actions'):format(k))
    end
    if v ~= false and type(v) ~= 'string' then
      fail(('keys.%s must be a key (a string like "<Tab>") or false'):format(k))
    end
  end
end

-- The command that starts the bridge with these options (setup() completes them).
local function build_cmd(opts)
  local cmd = { opts.bridge }
  if opts.log_file then
    vim.list_extend(cmd, { '--log-file', opts.log_file })
  end
  if type(opts.agent) == 'string' then
    vim.list_extend(cmd, { '--agent', opts.agent }) -- a short name: the bridge knows its command
  elseif opts.agent then
    table.insert(cmd, '--')
    vim.list_extend(cmd, vim.deepcopy(opts.agent))
  elseif opts.model then
    -- The bridge's own agent with a model: the same executable, its agent subcommand.
    local m = opts.model
    vim.list_extend(cmd, { '--', opts.bridge, 'agent' })
    for _, f in ipairs({ { 'url', '--model-url' }, { 'name', '--model' }, { 'format', '--model-format' }, { 'server', '--model-server' }, { 'api_key_env', '--api-key-env' } }) do
      if m[f[1]] then
        vim.list_extend(cmd, { f[2], m[f[1]] })
      end
    end
    vim.list_extend(cmd, vim.deepcopy(m.args or {}))
  end
  return cmd
end

-- The acp client attached to buf, if any.
local function client_of(buf)
  return vim.lsp.get_clients({ bufnr = buf, name = 'acp' })[1]
end

local function run(buf, command, arguments)
  local client = client_of(buf)
  if client then
    client:exec_cmd({ title = command, command = command, arguments = arguments }, { bufnr = buf })
  end
end

-- The quieter display (display = 'mark'): the suggestion nearest the cursor, anywhere in the buffer
-- (textDocument/copilotInlineEdit), is first only a mark: a sign at its line and an end-of-line
-- hint at the cursor's. keys.reveal jumps to it, then shows it (the lines as they would read, below
-- its last line); keys.accept takes it (the edit, the cursor after it, then its accept command). Any
-- change of the buffer clears the mark and asks again, at once.
local mark_ns = api.nvim_create_namespace('acp_lsp_bridge_mark')

-- The mark of each buffer: { edit = {text, range, command}, client_id, tick, revealed }.
local marks = {}

local function clear_mark(buf)
  marks[buf] = nil
  if api.nvim_buf_is_valid(buf) then
    api.nvim_buf_clear_namespace(buf, mark_ns, 0, -1)
  end
end

-- The byte column of a position in the client's encoding.
local function byte_col(buf, line, character, enc)
  local text = api.nvim_buf_get_lines(buf, line, line + 1, false)[1] or ''
  if enc == 'utf-8' then
    return math.min(character, #text)
  end
  local ok, col = pcall(vim.str_byteindex, text, enc, character, false)
  return ok and col or #text
end

-- The lines of m's region as they would read with its edit.
local function preview(buf, m, enc)
  local r = m.edit.range
  local first = api.nvim_buf_get_lines(buf, r.start.line, r.start.line + 1, false)[1] or ''
  local last = api.nvim_buf_get_lines(buf, r['end'].line, r['end'].line + 1, false)[1] or ''
  local s = byte_col(buf, r.start.line, r.start.character, enc)
  local e = byte_col(buf, r['end'].line, r['end'].character, enc)
  return vim.split(first:sub(1, s) .. m.edit.text .. last:sub(e + 1), '\n', { plain = true })
end

local function draw_mark(buf)
  api.nvim_buf_clear_namespace(buf, mark_ns, 0, -1)
  local m = marks[buf]
  local client = m and vim.lsp.get_client_by_id(m.client_id)
  if not m or not client then
    return
  end
  local r = m.edit.range
  api.nvim_buf_set_extmark(buf, mark_ns, r.start.line, 0, { sign_text = '⇥', sign_hl_group = 'DiagnosticHint' })
  if m.revealed then
    local lines = {}
    for _, l in ipairs(preview(buf, m, client.offset_encoding)) do
      lines[#lines + 1] = { { '⇥ ' .. l, 'ComplHint' } }
    end
    api.nvim_buf_set_extmark(buf, mark_ns, r['end'].line, 0, { virt_lines = lines })
    return
  end
  local cur = api.nvim_win_get_cursor(0)[1] - 1
  local here = cur >= r.start.line and cur <= r['end'].line
  local hint = here and '⇥ next edit, here' or ('⇥ next edit, line %d'):format(r.start.line + 1)
  api.nvim_buf_set_extmark(buf, mark_ns, cur, 0, { virt_text = { { hint, 'Comment' } }, virt_text_pos = 'eol' })
end

-- The mark's request in flight for each buffer: { client_id, id }.
local asked = {}

-- ask_mark asks the bridge for the suggestion nearest the cursor and marks it, unless the buffer
-- changed meanwhile or a newer request was made (a stale answer is never shown). The request in
-- flight for the buffer is cancelled first: its answer would be for an older text.
local function ask_mark(buf)
  local client = client_of(buf)
  if not client or not api.nvim_buf_is_valid(buf) or api.nvim_get_current_buf() ~= buf then
    return
  end
  local old = asked[buf]
  local old_client = old and vim.lsp.get_client_by_id(old.client_id)
  if old_client and old_client.requests[old.id] and old_client.requests[old.id].type == 'pending' then
    old_client:cancel_request(old.id)
  end
  asked[buf] = nil
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = 2 }
  local tick = api.nvim_buf_get_changedtick(buf)
  local this
  local ok, id = client:request('textDocument/copilotInlineEdit', params, function(err, res)
    local current = asked[buf] == this
    if current then
      asked[buf] = nil
    end
    if err or not current or not api.nvim_buf_is_valid(buf) or api.nvim_buf_get_changedtick(buf) ~= tick then
      return
    end
    local e = type(res) == 'table' and res.edits and res.edits[1]
    if not e then
      clear_mark(buf)
      return
    end
    marks[buf] = { edit = e, client_id = client.id, tick = tick, revealed = false }
    draw_mark(buf)
  end, buf)
  if ok and id then
    this = { client_id = client.id, id = id }
    asked[buf] = this
  end
end

-- mark_mode sets buf up for display = 'mark': Neovim's ghost text off, a request at once after each
-- change. The bridge does the waiting: it asks the agent once the buffer has been still for its
-- delay, counted from the last change, and a newer request supersedes an older one.
local function mark_mode(buf)
  if vim.lsp.inline_completion then
    vim.lsp.inline_completion.enable(false, { bufnr = buf })
  end
  local group = api.nvim_create_augroup('acp_lsp_bridge_mark_' .. buf, { clear = true })
  api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, {
    group = group,
    buffer = buf,
    callback = function()
      clear_mark(buf)
      ask_mark(buf)
    end,
  })
  api.nvim_create_autocmd({ 'CursorMoved', 'CursorMovedI' }, {
    group = group,
    buffer = buf,
    callback = function()
      if marks[buf] and not marks[buf].revealed then
        draw_mark(buf) -- the hint follows the cursor
      end
    end,
  })
end

--- The handler of acp-lsp-bridge/suggestionReady (docs/surfaces.md): the bridge asked the agent
--- ahead, once the buffer was still, and its suggestion is ready. When that buffer is the current
--- one, unchanged since, in insert mode with the cursor where the bridge asked, ask for it now
--- instead of after Neovim's own wait (200 ms after the last change): ghost text through the
--- buffer's inline completion, or the mark (display = 'mark'). Anything else is left to Neovim's
--- own request.
function M.suggestion_ready(_, result, ctx)
  if type(result) ~= 'table' or type(result.textDocument) ~= 'table' or type(result.position) ~= 'table' then
    return
  end
  local buf = api.nvim_get_current_buf()
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client or vim.uri_from_bufnr(buf) ~= result.textDocument.uri or not api.nvim_get_mode().mode:match('^i') then
    return
  end
  if vim.lsp.util.buf_versions[buf] ~= result.textDocument.version then
    return -- typed since: the bridge asks again
  end
  local here = vim.lsp.util.make_position_params(0, client.offset_encoding).position
  if here.line ~= result.position.line or here.character ~= result.position.character then
    return
  end
  if M.options and M.options.display == 'mark' then
    ask_mark(buf)
    return
  end
  -- Neovim 0.12 has no public call for "ask now"; its buffer's inline completion does. Without
  -- it (another version), Neovim's own request comes after its wait.
  local ok, capability = pcall(require, 'vim.lsp._capability')
  local completor = ok and type(capability.all) == 'table' and capability.all.inline_completion
  completor = completor and completor.active and completor.active[buf]
  if type(completor) ~= 'table' or type(completor.request) ~= 'function' then
    return
  end
  if type(completor.reset_timer) == 'function' then
    completor:reset_timer() -- Neovim's own request would ask the same again
  end
  completor:request(vim.lsp.protocol.InlineCompletionTriggerKind.Automatic)
end

-- take_mark applies buf's revealed mark: its edit, the cursor after it (as after ghost text), then
-- its accept command. It reports whether there was one. The bridge asks for the next suggestion at
-- once after an accepted edit, at its end: the mark's request after this change, from there, takes
-- that answer rather than superseding it.
local function take_mark(buf)
  local m = marks[buf]
  local client = m and vim.lsp.get_client_by_id(m.client_id)
  if not m or not m.revealed or not client then
    return false
  end
  clear_mark(buf)
  vim.schedule(function()
    local r = m.edit.range
    vim.lsp.util.apply_text_edits({ { range = r, newText = m.edit.text } }, buf, client.offset_encoding)
    if api.nvim_win_get_buf(0) == buf then
      local lines = vim.split(m.edit.text, '\n', { plain = true })
      local col = #lines[#lines]
      if #lines == 1 then
        col = col + byte_col(buf, r.start.line, r.start.character, client.offset_encoding)
      end
      pcall(api.nvim_win_set_cursor, 0, { r.start.line + #lines, col })
    end
    if m.edit.command then
      client:exec_cmd(m.edit.command, { bufnr = buf })
    end
  end)
  return true
end

-- partial returns an on_accept for vim.lsp.inline_completion.get() that takes only the next piece
-- of the ghost text (pattern: what a piece is, matched after what is already typed), without the
-- item's command: the agent hears nes/accept once the whole suggestion is in (the last piece keeps
-- the command, and the bridge sees the text read as suggested), and the rest is shown again at
-- once (the bridge answers the next request from the same suggestion).
local function partial(patterns)
  return function(item)
    local text = item.insert_text
    if type(text) ~= 'string' or not item.range then
      return item
    end
    local buf = api.nvim_get_current_buf()
    local sr, sc, er, ec = item.range:to_extmark()
    local typed = table.concat(api.nvim_buf_get_text(buf, sr, sc, er, ec, {}), '\n')
    if text:sub(1, #typed) ~= typed then
      return item -- the ghost text does not continue what is there: take it whole
    end
    local rest = text:sub(#typed + 1)
    local piece
    for _, pat in ipairs(patterns) do
      piece = rest:match(pat)
      if piece and piece ~= '' then
        break
      end
    end
    if not piece or piece == '' or piece == rest then
      return item -- the last piece: the whole suggestion is in
    end
    local part = vim.deepcopy(item)
    part.insert_text = typed .. piece
    part.command = nil
    return part
  end
end

-- A word: spaces, then letters, digits, _ and any non-ASCII character (UTF-8 bytes), or else
-- spaces and one other character. A line: up to and with the next line break.
local next_word = partial({ '^%s*[%w_\128-\255]+', '^%s*[^%w_%s\128-\255]' , '^%s+' })
local next_line = partial({ '^[^\n]*\n', '^[^\n]+' })

-- The keys' actions. accept is an expression mapping: when there is no ghost text to accept, its
-- key does what it did before (a <Tab> inserts a tab); so are the partial accepts and next/prev.
local actions = {
  accept = {
    modes = 'i',
    desc = 'Next edit: accept',
    fallback = true,
    fn = function()
      if take_mark(api.nvim_get_current_buf()) then
        return true
      end
      return vim.lsp.inline_completion ~= nil and vim.lsp.inline_completion.get()
    end,
  },
  reveal = {
    modes = { 'i', 'n' },
    desc = 'Next edit: go to the marked suggestion, then show it',
    fn = function()
      local buf = api.nvim_get_current_buf()
      local m = marks[buf]
      if not m then
        return
      end
      local r = m.edit.range
      local cur = api.nvim_win_get_cursor(0)[1] - 1
      if cur < r.start.line or cur > r['end'].line then
        api.nvim_win_set_cursor(0, { r.start.line + 1, 0 }) -- the jump to it
      else
        m.revealed = true
      end
      draw_mark(buf)
    end,
  },
  accept_word = {
    modes = 'i',
    desc = 'Next edit: accept the next word',
    fallback = true,
    fn = function()
      return vim.lsp.inline_completion ~= nil and vim.lsp.inline_completion.get({ on_accept = next_word })
    end,
  },
  accept_line = {
    modes = 'i',
    desc = 'Next edit: accept the next line',
    fallback = true,
    fn = function()
      return vim.lsp.inline_completion ~= nil and vim.lsp.inline_completion.get({ on_accept = next_line })
    end,
  },
  next = {
    modes = 'i',
    desc = 'Next edit: the next alternative',
    fn = function()
      if vim.lsp.inline_completion then
        vim.lsp.inline_completion.select({ count = 1 })
      end
    end,
  },
  prev = {
    modes = 'i',
    desc = 'Next edit: the previous alternative',
    fn = function()
      if vim.lsp.inline_completion then
        vim.lsp.inline_completion.select({ count = -1 })
      end
    end,
  },
  dismiss = {
    modes = 'i',
    desc = 'Next edit: dismiss',
    fn = function()
      local buf = api.nvim_get_current_buf()
      -- Leaving and re-entering insert mode clears Neovim's ghost text; the bridge ends the
      -- suggestions of this file as rejected.
      clear_mark(buf)
      run(buf, 'acp-lsp-bridge.reject', { { uri = vim.uri_from_bufnr(buf) } })
      vim.cmd('stopinsert')
      vim.schedule(function() vim.cmd('startinsert') end)
    end,
  },
  suggest = {
    modes = { 'i', 'n' },
    desc = 'Next edit: ask now',
    fn = function()
      local buf = api.nvim_get_current_buf()
      local client = client_of(buf)
      if not client then
        return
      end
      local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
      run(buf, 'acp-lsp-bridge.suggest', { { uri = params.textDocument.uri, position = params.position } })
    end,
  },
  code_actions = {
    modes = 'n',
    desc = 'Next edit: code actions',
    fn = function() vim.lsp.buf.code_action() end,
  },
}

-- map sets the keys in buf, a buffer the acp client attached to: buffer-local, so that the keys
-- mean nothing where the bridge does not run. The keys of an earlier setup() go first.
local function map(buf)
  for _, m in ipairs(vim.b[buf].acp_lsp_bridge_keys or {}) do
    pcall(vim.keymap.del, m[1], m[2], { buffer = buf })
  end
  local mapped = {}
  for name, lhs in pairs(M.options.keys) do
    local a = actions[name]
    if lhs then
      local rhs = a.fn
      if a.fallback then
        rhs = function()
          if not a.fn() then
            return lhs
          end
        end
      end
      vim.keymap.set(a.modes, lhs, rhs, { buffer = buf, expr = a.fallback, desc = a.desc })
      table.insert(mapped, { a.modes, lhs })
    end
  end
  vim.b[buf].acp_lsp_bridge_keys = mapped
end

-- Focus: the file, the cursor and the visible lines, when you enter a buffer.
local function send_focus(buf)
  local client = client_of(buf)
  local win = api.nvim_get_current_win()
  if not client or api.nvim_win_get_buf(win) ~= buf then
    return
  end
  local top, bottom = vim.fn.line('w0', win) - 1, vim.fn.line('w$', win) - 1
  client:notify('acp-lsp-bridge/didFocus', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = vim.lsp.util.make_position_params(win, client.offset_encoding).position,
    visibleRange = { start = { line = top, character = 0 }, ['end'] = { line = bottom, character = 0 } },
  })
end

-- Diagnostics: what Neovim shows for the buffer, in the position encoding the bridge negotiated
-- (vim.diagnostic columns are bytes).
local function send_diagnostics(buf)
  local client = client_of(buf)
  if not client or not api.nvim_buf_is_loaded(buf) then
    return
  end
  local enc = client.offset_encoding
  local function col(lnum, c)
    if enc == 'utf-8' then
      return c
    end
    local line = api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1] or ''
    return vim.str_utfindex(line, enc, math.min(c, #line), false)
  end
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local end_lnum, end_col = d.end_lnum or d.lnum, d.end_col or d.col
    out[#out + 1] = {
      range = {
        start = { line = d.lnum, character = col(d.lnum, d.col) },
        ['end'] = { line = end_lnum, character = col(end_lnum, end_col) },
      },
      severity = d.severity,
      message = d.message,
    }
  end
  client:notify('acp-lsp-bridge/diagnostics', { textDocument = { uri = vim.uri_from_bufnr(buf) }, diagnostics = out })
end

-- Requests to the bridge in flight, per buffer, for status().
local pending = {}

--- For the statusline: the bridge's state for the current buffer, as the bridge last said it of
--- that buffer (acp-lsp-bridge/status), or of the agent when it concerns every buffer (starting,
--- signing in, slow, failed): "✓ next edit" ready, "⋯ next edit" while the agent is asked (at
--- once, after setup()), "… next edit" starting, "○ next edit off" (the switch), "⊘ next edit" a
--- file kept from the agent, "⚿ next edit: sign in", "✗ next edit" the agent gave up; "" where
--- the bridge does not run.
---@return string
function M.status()
  local buf = api.nvim_get_current_buf()
  local client = client_of(buf)
  if not client then
    return ''
  end
  local reqs = pending[buf]
  if reqs and next(reqs) ~= nil then
    return '⋯ next edit'
  end
  local state = require('acp_lsp_bridge.state')
  local st = state.of(client.id, vim.uri_from_bufnr(buf))
  return st and state.labels[st.state] or ''
end

local function attached(buf)
  if M.options.keys then
    map(buf)
  end
  if M.options.display == 'mark' then
    mark_mode(buf)
  end
  if M.options.focus then
    send_focus(buf)
  end
  -- Diagnostics shown before the bridge attached would otherwise wait for the next change.
  if M.options.diagnostics and #vim.diagnostic.get(buf) > 0 then
    send_diagnostics(buf)
  end
end

-- The switch commands' answers, per buffer ("" for the global switch), for :checkhealth.
M.switched = {}

--- Turns suggestions while typing on, off, or the other way (op: 'enable', 'disable', 'toggle'),
--- for every buffer, or for the current one when opts.buffer; what you ask for by hand still works.
--- Says what is now in force. Needs setup().
---@param op 'enable'|'disable'|'toggle'
---@param opts? {buffer?: boolean}
function M.switch(op, opts)
  local buf = api.nvim_get_current_buf()
  local client = client_of(buf)
  if not client then
    for _, c in ipairs(vim.lsp.get_clients({ name = 'acp' })) do
      client = c
      break
    end
  end
  if not client then
    vim.notify('acp-lsp-bridge: the bridge is not running', vim.log.levels.WARN)
    return
  end
  local arguments = {}
  local where = 'every buffer'
  if opts and opts.buffer then
    arguments = { { uri = vim.uri_from_bufnr(buf) } }
    where = vim.fn.fnamemodify(api.nvim_buf_get_name(buf), ':t')
  end
  client:request('workspace/executeCommand', { command = 'acp-lsp-bridge.' .. op, arguments = arguments }, function(err, res)
    if err then
      vim.notify('acp-lsp-bridge: ' .. op .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local on = type(res) == 'table' and res.automatic == true
    M.switched[(opts and opts.buffer) and vim.uri_from_bufnr(buf) or ''] = on
    vim.notify(('acp-lsp-bridge: suggestions while typing are %s for %s%s'):format(on and 'on' or 'off', where, on and '' or ' (<M-CR> still asks)'))
  end, buf)
end

--- Configures and enables the 'acp' language server (lsp/acp.lua) with these options, and sets up
--- keys, focus, diagnostics and the statusline hint for the buffers it attaches to. Calling it
--- again replaces the earlier options.
---@param opts? table see :help acp_lsp_bridge-options
function M.setup(opts)
  opts = vim.deepcopy(opts or {})
  if type(opts) ~= 'table' then
    fail('takes a table of options, e.g. setup({ agent = { "my-nes-agent" } })')
  end
  local keys = opts.keys
  opts.keys = nil
  opts = vim.tbl_extend('force', vim.deepcopy(defaults), opts)
  if keys == false then
    opts.keys = {}
  elseif keys ~= nil then
    if type(keys) ~= 'table' then
      fail('keys must be a table, e.g. { accept = "<C-l>", dismiss = false }, or false for no keys')
    end
    opts.keys = vim.tbl_extend('force', opts.keys, keys)
  end
  check(opts)
  M.options = opts

  -- initializationOptions always, so that calling setup() again replaces an earlier value
  -- (vim.lsp.config merges into what it has). An empty exclude list goes as [] either way.
  local config = {
    cmd = build_cmd(opts),
    init_options = {
      prompts = opts.prompts,
      exclude = opts.exclude,
      defaultExcludes = opts.default_excludes,
      delay = opts.delay or vim.NIL,
      suggestTimeout = opts.suggest_timeout or vim.NIL,
      promptTimeout = opts.prompt_timeout or vim.NIL,
      automatic = opts.automatic,
      suggestionReady = true,
      -- Neovim asks by itself as you type: the bridge asks ahead from the first word on.
      asksItself = true,
    },
  }
  if opts.filetypes then
    config.filetypes = opts.filetypes
  end
  vim.lsp.config('acp', config)
  vim.lsp.enable('acp')

  local group = api.nvim_create_augroup('acp_lsp_bridge', { clear = true })
  api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == 'acp' then
        attached(ev.buf)
      end
    end,
  })
  if opts.focus then
    api.nvim_create_autocmd('BufEnter', {
      group = group,
      callback = function(ev) send_focus(ev.buf) end,
    })
  end
  if opts.diagnostics then
    api.nvim_create_autocmd('DiagnosticChanged', {
      group = group,
      callback = function(ev) send_diagnostics(ev.buf) end,
    })
  end
  api.nvim_create_autocmd('LspRequest', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      local req = ev.data.request
      if not client or client.name ~= 'acp' or not req then
        return
      end
      local m = req.method
      if m ~= 'textDocument/inlineCompletion' and m ~= 'textDocument/codeAction' and m ~= 'workspace/executeCommand' then
        return
      end
      local buf = ev.buf or req.bufnr or 0
      pending[buf] = pending[buf] or {}
      pending[buf][ev.data.request_id] = req.type == 'pending' or nil
      vim.cmd('redrawstatus')
    end,
  })

  -- :AcpLspBridge enable|disable|toggle [buffer]
  api.nvim_create_user_command('AcpLspBridge', function(cmd)
    local op, scope = cmd.fargs[1], cmd.fargs[2]
    if op ~= 'enable' and op ~= 'disable' and op ~= 'toggle' then
      vim.notify('AcpLspBridge: want enable, disable or toggle, then "buffer" for this buffer only', vim.log.levels.ERROR)
      return
    end
    if scope ~= nil and scope ~= 'buffer' and scope ~= 'global' then
      vim.notify(('AcpLspBridge %s %s: want "buffer" or "global" (the default)'):format(op, scope), vim.log.levels.ERROR)
      return
    end
    M.switch(op, { buffer = scope == 'buffer' })
  end, {
    nargs = '+',
    desc = 'acp-lsp-bridge: suggestions while typing on or off, for every buffer or this one',
    complete = function(_, line)
      local n = #vim.split(line, '%s+', { trimempty = true })
      if n <= 1 or (n == 2 and not line:match('%s$')) then
        return { 'enable', 'disable', 'toggle' }
      end
      return { 'buffer', 'global' }
    end,
  })

  -- setup() may come after the bridge attached (a plugin manager loading this plugin late).
  for _, client in ipairs(vim.lsp.get_clients({ name = 'acp' })) do
    for buf in pairs(client.attached_buffers) do
      attached(buf)
    end
  end
end

return M
