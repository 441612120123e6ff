-- :checkhealth acp_lsp_bridge: the bridge's binary and version, whether the agent can give Next
-- Edit Suggestions (acp-lsp-bridge doctor --json), and the position encoding of the running client.
--
-- It reads the resolved 'acp' config (lsp/acp.lua, setup() and the user's own vim.lsp.config), so
-- it checks what Neovim would start, however it was configured.

local M = {}

local health = vim.health

local install_advice = {
  'Install acp-lsp-bridge and put it on your PATH: unpack the release archive for your platform from https://github.com/acp-lsp-bridge/acp-lsp-bridge/releases',
  'or: go install github.com/acp-lsp-bridge/acp-lsp-bridge/cmd/acp-lsp-bridge@latest',
  'or, with mason.nvim: :MasonInstall acp-lsp-bridge',
  "or name it by its path: require('acp_lsp_bridge').setup({ bridge = '/path/to/acp-lsp-bridge' })",
}

-- How long doctor waits for each of the agent's answers, and how long this check waits for doctor:
-- an npm agent can take seconds to start; after that the check gives up rather than hold the
-- editor.
local doctor_timeout = '10s'
local doctor_wait_ms = 25000

-- split returns the bridge and the agent of an 'acp' cmd: the agent command follows '--', or is
-- named in init_options.agent; nil when the bridge runs its built-in agent. An agent the bridge
-- knows by a short name (--agent NAME, as setup({ agent = 'copilot' }) builds it) comes back as
-- the third value, the name, with no command: the bridge knows it.
local function split(config)
  local cmd = config.cmd
  local agent, name
  for i, a in ipairs(cmd) do
    if a == '--' then
      agent = vim.list_slice(cmd, i + 1)
      break
    end
    -- The bridge's flags, as Go's flag package reads them: --agent NAME, -agent NAME, --agent=NAME.
    if i > 1 and (a == '--agent' or a == '-agent') and cmd[i + 1] then
      name = cmd[i + 1]
    elseif i > 1 and a:match('^%-%-?agent=') then
      name = a:match('^%-%-?agent=(.*)$')
    end
  end
  if name == '' then
    name = nil
  end
  if name then
    -- The bridge refuses --agent with a command after "--"; doctor says so too.
    return cmd[1], nil, name
  end
  local named = vim.tbl_get(config, 'init_options', 'agent')
  if not agent and type(named) == 'table' and type(named.command) == 'string' then
    agent = { named.command }
    vim.list_extend(agent, named.args or {})
  end
  if agent and #agent == 0 then
    agent = nil
  end
  return cmd[1], agent
end

local function shell_words(words)
  return table.concat(vim.tbl_map(function(w)
    return w:find('[%s\'"\\$`]') and vim.fn.shellescape(w) or w
  end, words), ' ')
end

-- The advice for each doctor failure (docs/doctor.md, "failure values").
local doctor_advice = {
  ['not-found'] = 'Install the agent, or name it by its full path: setup({ agent = { "/path/to/agent", ... } })',
  ['no-nes'] = 'This agent offers no Next Edit Suggestions. Leave `agent` unset for the bridge\'s built-in agent, '
    .. 'or use a model agent: { "acp-lsp-bridge", "agent", "--model-url", "http://127.0.0.1:11434", "--model", "qwen2.5-coder:7b" }',
  ['initialize-timeout'] = 'The agent did not answer in ' .. doctor_timeout .. '; if it is slow to start, run the doctor command below with a longer --timeout',
  ['nes-start-timeout'] = 'The agent did not answer nes/start in ' .. doctor_timeout .. '; run the doctor command below with a longer --timeout',
}

-- check_agent runs doctor, from the bridge at path (bridge: as the config names it), on the agent
-- (nil: the built-in one; name: one the bridge knows by that short name, --agent NAME) in cwd,
-- the workspace.
local function check_agent(path, bridge, agent, name, cwd)
  local label, argv, doctor_words
  if name then
    label = ('`%s` (`acp-lsp-bridge --agent %s`)'):format(name, name)
    argv = { path, 'doctor', '--json', '--timeout', doctor_timeout, '--agent', name }
    doctor_words = { bridge, 'doctor', '--agent', name }
  else
    if agent then
      label = '`' .. shell_words(agent) .. '`'
    else
      agent = { path, 'agent' }
      label = 'the built-in agent (`acp-lsp-bridge agent`)'
    end
    argv = { path, 'doctor', '--json', '--timeout', doctor_timeout, '--' }
    vim.list_extend(argv, agent)
    doctor_words = vim.list_extend({ bridge, 'doctor', '--' }, vim.deepcopy(agent))
  end
  local doctor_cmd = 'in a terminal, in ' .. cwd .. ': ' .. shell_words(doctor_words)
  local ok, proc = pcall(vim.system, argv, { cwd = cwd, text = true })
  if not ok then
    health.error('could not run the doctor: ' .. tostring(proc))
    return
  end
  local res = proc:wait(doctor_wait_ms)
  local decoded, report = pcall(vim.json.decode, res.stdout or '', { luanil = { object = true, array = true } })
  if not decoded or type(report) ~= 'table' or report.ok == nil then
    if res.code == 124 then
      health.error(('%s: the doctor did not finish in %d s'):format(label, doctor_wait_ms / 1000), { 'Run it ' .. doctor_cmd })
      return
    end
    health.error(('%s: the doctor gave no report (exit %d): %s'):format(label, res.code, vim.trim(res.stderr or '')),
      { 'An acp-lsp-bridge without `doctor` is too old for this plugin: update it', 'Run it ' .. doctor_cmd })
    return
  end
  local info = vim.tbl_get(report, 'agent', 'info')
  local who = ''
  if type(info) == 'table' then
    who = (', which says it is %s %s'):format(info.name or '?', info.version or '?')
  end
  if report.ok then
    health.ok(('%s%s: %s (it uses %s with the bridge)'):format(label, who, report.reason,
      vim.tbl_get(report, 'agent', 'positionEncoding') or '?'))
    for _, w in ipairs(report.warnings or {}) do
      health.warn(w)
    end
    return
  end
  local advice = {}
  local command = type(report.command) == 'table' and report.command[1] or nil
  if name and report.failure == 'not-found' and command then
    -- The reason says how to install it; where the bridge looked is the PATH it inherits.
    table.insert(advice, ('The bridge looks for `%s` on Neovim\'s PATH: install it (the line above says how), or put the folder it is in on that PATH'):format(command))
  elseif type(report.advice) == 'string' then
    -- The model's server, or the sample: doctor says what to do.
    table.insert(advice, report.advice)
  elseif doctor_advice[report.failure] then
    table.insert(advice, doctor_advice[report.failure])
  end
  table.insert(advice, 'For the whole report, run ' .. doctor_cmd)
  health.error(('%s%s: %s'):format(label, who, report.reason), advice)
  -- The agent's last words usually say what it needs.
  for _, l in ipairs(vim.list_slice(report.agentStderr or {}, math.max(1, #(report.agentStderr or {}) - 4))) do
    health.info('the agent wrote: ' .. l)
  end
end

local function check_encoding()
  -- :checkhealth opens its own buffer; the buffer the user ran it from is the alternate one.
  local buf = vim.fn.bufnr('#')
  local label = buf > 0 and vim.fn.bufname(buf) ~= '' and vim.fn.fnamemodify(vim.fn.bufname(buf), ':~:.') or nil
  local client = buf > 0 and vim.lsp.get_clients({ bufnr = buf, name = 'acp' })[1] or nil
  if client then
    health.ok(('%s, negotiated by the acp client (id %d) attached to this buffer (%s)'):format(
      client.offset_encoding, client.id, label or ('buffer ' .. buf)))
    return
  end
  local others = vim.lsp.get_clients({ name = 'acp' })
  local advice = {
    'Open a file: the bridge attaches to every file type unless `filetypes` says otherwise',
    ':checkhealth vim.lsp shows every client and why one did not start; the bridge\'s log is ' .. vim.fn.stdpath('log') .. '/acp-lsp-bridge.log',
  }
  if #others > 0 then
    table.insert(advice, 1, ('%d acp client(s) run for other buffers (encoding %s)'):format(#others, others[1].offset_encoding))
  end
  health.warn('no acp client attached to this buffer' .. (label and (' (' .. label .. ')') or ''), advice)
end

function M.check()
  health.start('acp-lsp-bridge: configuration')
  local v = vim.version()
  if vim.lsp.inline_completion then
    health.ok(('Neovim %d.%d.%d: ghost text with vim.lsp.inline_completion'):format(v.major, v.minor, v.patch))
  else
    health.warn(('Neovim %d.%d.%d has no vim.lsp.inline_completion: no ghost text, only code actions'):format(v.major, v.minor, v.patch),
      { 'Update to Neovim 0.12 for ghost text' })
  end
  local config = vim.lsp.config.acp
  if not config then
    health.error("no 'acp' language server config: lsp/acp.lua is not on the runtimepath",
      { 'Install the plugin with your plugin manager (vim.pack.add, lazy.nvim); it adds lsp/acp.lua' })
    return
  end
  if type(config.cmd) ~= 'table' or type(config.cmd[1]) ~= 'string' then
    health.warn("the 'acp' config's cmd is not a list of strings (a function?): the bridge and agent cannot be checked")
    return
  end
  health.info('cmd: ' .. shell_words(config.cmd))
  if vim.lsp.is_enabled and not vim.lsp.is_enabled('acp') then
    health.warn("the 'acp' config is not enabled, so the bridge does not start",
      { "Call require('acp_lsp_bridge').setup({}), or vim.lsp.enable('acp')" })
  end

  health.start('acp-lsp-bridge: binary')
  local bridge, agent, name = split(config)
  local path = vim.fn.exepath(bridge)
  if path == '' then
    health.error(('%s not found: %s'):format(bridge,
      bridge:find('[/\\]') and 'no executable file at that path' or 'not on your PATH (' .. (vim.env.PATH or '') .. ')'), install_advice)
  else
    health.ok('found: ' .. path)
    local res = vim.system({ path, '--version' }, { text = true }):wait(5000)
    local out = vim.trim(res.stdout or '')
    if res.code == 0 and out ~= '' then
      health.ok('version: ' .. out)
    else
      health.error(('`%s --version` failed (exit %d): %s'):format(path, res.code, vim.trim((res.stderr or '') .. ' ' .. out)),
        { 'Reinstall acp-lsp-bridge (see above for how); the file may be damaged or built for another platform' })
    end
  end

  health.start('acp-lsp-bridge: agent')
  if path == '' then
    health.info('not checked: the check runs the bridge (acp-lsp-bridge doctor), which was not found')
  else
    local client = vim.lsp.get_clients({ name = 'acp' })[1]
    local cwd = client and client.root_dir or vim.fn.getcwd()
    check_agent(path, bridge, agent, name, cwd)
  end

  health.start('acp-lsp-bridge: position encoding')
  check_encoding()

  health.start('acp-lsp-bridge: status')
  local clients = vim.lsp.get_clients({ name = 'acp' })
  if #clients == 0 then
    health.info('no acp client runs: nothing to show')
  end
  local state = require('acp_lsp_bridge.state')
  -- Of the buffer it was run from, as its statusline shows it, when the client is attached there.
  local from = vim.fn.bufnr('#')
  for _, client in ipairs(clients) do
    local st = state.by_client[client.id]
    if from > 0 and client.attached_buffers[from] then
      st = state.of(client.id, vim.uri_from_bufnr(from))
    end
    if not st then
      health.info(('client %d: the bridge has said nothing of its state yet'):format(client.id))
    else
      local line = ('client %d: %s: %s (%s)'):format(client.id, st.state, st.message or '', os.date('%H:%M:%S', st.time))
      if st.state == 'failed' then
        health.error(line, { 'Read the message above and the bridge\'s log; :lsp restart acp tries again' })
      elseif st.state == 'signingIn' then
        local advice = { 'Run the command acp-lsp-bridge.signIn, or set the agent\'s key in its environment' }
        if name == 'copilot' then
          table.insert(advice, 'Or, in a terminal: acp-lsp-bridge sign-in copilot (a code to enter on any device), then :lsp restart acp')
        end
        health.warn(line, advice)
      elseif st.state == 'slow' then
        health.warn(line, { 'Suggestions do not come in time: the message above says whose timeout to raise, or when the model server takes requests again' })
      else
        health.ok(line)
      end
    end
  end
end

return M
