// acp-lsp-bridge for VS Code: starts the bridge as a language server through vscode-languageclient.
//
// The client does the rest: textDocument/inlineCompletion (ghost text), code actions, and the
// server's commands (acp-lsp-bridge.accept and the others, which vscode-languageclient registers
// from executeCommandProvider). This file adds the settings, the choice of the bridge (the user's
// setting, else the one bundled in the platform's package, else PATH), palette commands with the
// right arguments, a restart when the settings change, and the two notifications that tell the
// bridge what the editor shows: the focused file and every file's diagnostics.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';

/** The settings section; also the client id, so that `acpLspBridge.trace.server` is read by the client. */
export const SECTION = 'acpLspBridge';

/**
 * The settings that choose what runs (the bridge, its agent, its log file) and what the agent may
 * see (the exclusion globs): a change restarts the bridge. They are read from the User settings
 * only (in a remote window, the Remote settings override them), never from a workspace's
 * settings: a folder you open must not choose the programs the extension starts, nor hand your
 * secrets to the agent. `path` is `machine`-scoped (each host has its own bridge: in a
 * remote window it is read from the Remote settings), the others `window`-scoped.
 */
export const SETTINGS = ['path', 'agent', 'agentName', 'logFile', 'exclude', 'defaultExcludes', 'delay', 'automatic', 'display', 'suggestTimeout', 'promptTimeout'] as const;

/** The bridge's notifications beyond LSP (lspside.NotifyDidFocus, lspside.NotifyDiagnostics). */
export const NOTIFICATIONS = {
  didFocus: 'acp-lsp-bridge/didFocus',
  diagnostics: 'acp-lsp-bridge/diagnostics',
} as const;

/** The bridge's notification of its state, to the editor (lspside.NotifyStatus). */
export const STATUS_NOTIFICATION = 'acp-lsp-bridge/status';

/**
 * The bridge's notification that a suggestion it asked for ahead is ready
 * (lspside.NotifySuggestionReady), sent because initializationOptions.suggestionReady is true.
 */
export const READY_NOTIFICATION = 'acp-lsp-bridge/suggestionReady';

/** acp-lsp-bridge/suggestionReady's params (docs/surfaces.md). */
interface SuggestionReady {
  textDocument: { uri: string; version: number };
  position: { line: number; character: number };
}

/** acp-lsp-bridge/status's params (docs/surfaces.md). */
interface BridgeStatus {
  state: string;
  message: string;
  uri?: string;
  agent?: string;
}

/** The status bar's text of each state. */
const STATUS_TEXT: Record<string, string> = {
  starting: '$(loading~spin) NES',
  signingIn: '$(key) NES: sign in',
  ready: '$(check) NES',
  asking: '$(sync~spin) NES',
  off: '$(circle-slash) NES off',
  excluded: '$(eye-closed) NES',
  slow: '$(watch) NES: slow',
  failed: '$(error) NES',
};

/** The bridge's commands (its executeCommandProvider), run through workspace/executeCommand. */
export const SERVER_COMMANDS = {
  accept: 'acp-lsp-bridge.accept',
  reject: 'acp-lsp-bridge.reject',
  suggest: 'acp-lsp-bridge.suggest',
  signIn: 'acp-lsp-bridge.signIn',
  restart: 'acp-lsp-bridge.restart',
  enable: 'acp-lsp-bridge.enable',
  disable: 'acp-lsp-bridge.disable',
  toggle: 'acp-lsp-bridge.toggle',
} as const;

/**
 * The palette commands. Their ids differ from the server's: vscode-languageclient registers the
 * server's own ids itself, and registering them twice fails.
 */
export const COMMANDS = {
  suggestNow: 'acpLspBridge.suggestNow',
  dismiss: 'acpLspBridge.dismiss',
  restartAgent: 'acpLspBridge.restartAgent',
  signIn: 'acpLspBridge.signIn',
  restartServer: 'acpLspBridge.restartServer',
  toggleAutomatic: 'acpLspBridge.toggleAutomatic',
  toggleAutomaticForFile: 'acpLspBridge.toggleAutomaticForFile',
  showMenu: 'acpLspBridge.showMenu',
  reveal: 'acpLspBridge.reveal',
} as const;

interface Settings {
  /** acpLspBridge.path as the user set it; "" when not set. */
  path: string;
  agent: string[];
  /** acpLspBridge.agentName: an agent the bridge knows by this short name (--agent NAME); "" when not set. */
  agentName: string;
  logFile: string;
  /** Globs of files kept from the agent besides the bridge's defaults (--exclude). */
  exclude: string[];
  /** false: the bridge's default globs keep nothing back (--no-default-excludes). */
  defaultExcludes: boolean;
  /** Milliseconds the document must be still before suggestions while typing (--delay); 0: the bridge's default. */
  delay: number;
  /** false: start with suggestions while typing off (--automatic=false). */
  automatic: boolean;
  /** 'ghost': ghost text as you type; 'mark': a mark and a hint first, the suggestion on reveal. */
  display: 'ghost' | 'mark';
  /** Milliseconds the bridge waits for a suggestion (--suggest-timeout); 0: the bridge's default. */
  suggestTimeout: number;
  /** The same for an agent asked through prompts (--prompt-timeout); 0: the bridge's default. */
  promptTimeout: number;
}

/**
 * A setting's value from the User settings (merged with the Remote settings in a remote window),
 * else its default; never a workspace's or a folder's value.
 */
function userSetting<T>(config: vscode.WorkspaceConfiguration, key: string, fallback: T): T {
  const i = config.inspect<T>(key);
  return i?.globalValue ?? i?.defaultValue ?? fallback;
}

/** The settings of SETTINGS that a workspace or folder sets: they are ignored. */
function setByWorkspace(config: vscode.WorkspaceConfiguration): string[] {
  return SETTINGS.filter((key) => {
    const i = config.inspect(key);
    return i?.workspaceValue !== undefined || i?.workspaceFolderValue !== undefined;
  }).map((key) => `${SECTION}.${key}`);
}

function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const agent = userSetting<unknown>(config, 'agent', []);
  const agentName = userSetting<unknown>(config, 'agentName', '');
  const bridge = userSetting<unknown>(config, 'path', '');
  const logFile = userSetting<unknown>(config, 'logFile', '');
  const exclude = userSetting<unknown>(config, 'exclude', []);
  const defaultExcludes = userSetting<unknown>(config, 'defaultExcludes', true);
  const delay = userSetting<unknown>(config, 'delay', 0);
  const automatic = userSetting<unknown>(config, 'automatic', true);
  const display = userSetting<unknown>(config, 'display', 'ghost');
  const timeout = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 100 ? Math.min(Math.round(v), 600000) : 0);
  return {
    path: typeof bridge === 'string' ? expandHome(bridge.trim()) : '',
    agent: Array.isArray(agent) ? agent.filter((a): a is string => typeof a === 'string') : [],
    agentName: typeof agentName === 'string' ? agentName.trim() : '',
    logFile: typeof logFile === 'string' ? expandHome(logFile.trim()) : '',
    exclude: Array.isArray(exclude) ? exclude.filter((g): g is string => typeof g === 'string' && g.trim() !== '') : [],
    defaultExcludes: defaultExcludes !== false,
    delay: typeof delay === 'number' && Number.isFinite(delay) && delay > 0 ? Math.min(Math.round(delay), 60000) : 0,
    automatic: automatic !== false,
    display: display === 'mark' ? 'mark' : 'ghost',
    suggestTimeout: timeout(userSetting<unknown>(config, 'suggestTimeout', 0)),
    promptTimeout: timeout(userSetting<unknown>(config, 'promptTimeout', 0)),
  };
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameSettings(a: Settings, b: Settings): boolean {
  return a.path === b.path && a.logFile === b.logFile && sameList(a.agent, b.agent) && a.agentName === b.agentName && sameList(a.exclude, b.exclude) && a.defaultExcludes === b.defaultExcludes && a.delay === b.delay && a.automatic === b.automatic && a.display === b.display && a.suggestTimeout === b.suggestTimeout && a.promptTimeout === b.promptTimeout;
}

/** Where the user sets acpLspBridge.path in this window, and the command that opens that file. */
function pathSettingsFile(): { where: string; open: string; command: string } {
  if (vscode.env.remoteName !== undefined) {
    return {
      where: 'Remote settings (Preferences: Open Remote Settings (JSON))',
      open: 'Open Remote Settings (JSON)',
      command: 'workbench.action.openRemoteSettingsFile',
    };
  }
  return {
    where: 'User settings (Preferences: Open User Settings (JSON))',
    open: 'Open User Settings (JSON)',
    command: 'workbench.action.openSettingsJson',
  };
}

/** Whether command is a bare name, looked up on PATH, rather than a path. */
function isBareName(command: string): boolean {
  return !command.includes('/') && !(process.platform === 'win32' && command.includes('\\'));
}

/**
 * The file `command` names, or why it cannot be started: an absolute or relative path must be an
 * executable file, a bare name must be one in a folder of PATH (as spawn looks it up).
 */
function findExecutable(command: string): { file: string } | { problem: string } {
  const env = process.env;
  const windows = process.platform === 'win32';
  const executable = (file: string): boolean => {
    try {
      if (!fs.statSync(file).isFile()) {
        return false;
      }
      fs.accessSync(file, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const suffixes = windows ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((e) => e !== '')] : [''];
  if (!isBareName(command)) {
    const e = suffixes.find((e) => executable(command + e));
    if (e !== undefined) {
      return { file: command + e };
    }
    return { problem: fs.existsSync(command) ? 'it is not an executable file' : 'there is no such file' };
  }
  for (const d of (env.PATH ?? env.Path ?? '').split(path.delimiter).filter((d) => d !== '')) {
    const e = suffixes.find((e) => executable(path.join(d, command + e)));
    if (e !== undefined) {
      return { file: path.join(d, command + e) };
    }
  }
  return { problem: 'it is not on PATH' };
}

/** The folder the extension is installed in (context.extensionPath), set when it activates. */
let extensionPath: string | undefined;

/** The name of the bridge's executable on this platform. */
const BRIDGE_EXE = process.platform === 'win32' ? 'acp-lsp-bridge.exe' : 'acp-lsp-bridge';

/**
 * The bridge bundled with the extension, when this is a platform's package (`make vsix` puts the
 * bridge built for that platform in bin/), else undefined.
 */
function bundledBridge(): string | undefined {
  if (extensionPath === undefined) {
    return undefined;
  }
  const file = path.join(extensionPath, 'bin', BRIDGE_EXE);
  return fs.existsSync(file) ? file : undefined;
}

/** Where the bridge to start comes from, in this order: the user's setting, the package, PATH. */
type Bridge =
  | { from: 'settings'; command: string; bundled: string | undefined }
  | { from: 'bundled'; command: string }
  | { from: 'path'; command: string };

function chooseBridge(settings: Settings): Bridge {
  const bundled = bundledBridge();
  if (settings.path !== '') {
    return { from: 'settings', command: settings.path, bundled };
  }
  if (bundled !== undefined) {
    return { from: 'bundled', command: bundled };
  }
  return { from: 'path', command: 'acp-lsp-bridge' };
}

/** Why the bridge is the one it is, for the output channel. */
function describeBridge(bridge: Bridge, file: string): string {
  switch (bridge.from) {
    case 'settings':
      return isBareName(bridge.command)
        ? `using the bridge from your settings: ${file} (${SECTION}.path is "${bridge.command}", found on PATH)`
        : `using the bridge from your settings: ${file} (${SECTION}.path)`;
    case 'bundled':
      return `using the bridge bundled with the extension: ${file} (${SECTION}.path is not set)`;
    case 'path':
      return `using the bridge on PATH: ${file} (${SECTION}.path is not set, and no bridge is bundled with the extension)`;
  }
}

/**
 * The platform an executable is built for, as VS Code names platforms (Node's platform-arch), read
 * from its header (ELF, Mach-O or PE: what `make vsix` bundles); undefined when it is none of these.
 */
function builtFor(file: string): string | undefined {
  const head = Buffer.alloc(4096);
  let n: number;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      n = fs.readSync(fd, head, 0, head.length, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const arch = (m: number, x64: number, arm64: number): string | undefined => (m === x64 ? 'x64' : m === arm64 ? 'arm64' : undefined);
  let os: string, a: string | undefined;
  if (n >= 20 && head.readUInt32BE(0) === 0x7f454c46) {
    [os, a] = ['linux', arch(head.readUInt16LE(18), 62, 183)]; // EM_X86_64, EM_AARCH64
  } else if (n >= 8 && head.readUInt32LE(0) === 0xfeedfacf) {
    [os, a] = ['darwin', arch(head.readUInt32LE(4), 0x01000007, 0x0100000c)]; // CPU_TYPE_X86_64, CPU_TYPE_ARM64
  } else if (n >= 0x40 && head.toString('latin1', 0, 2) === 'MZ') {
    const pe = head.readUInt32LE(0x3c);
    if (pe + 6 > n || head.toString('latin1', pe, pe + 4) !== 'PE\0\0') {
      return undefined;
    }
    [os, a] = ['win32', arch(head.readUInt16LE(pe + 4), 0x8664, 0xaa64)]; // IMAGE_FILE_MACHINE_AMD64, _ARM64
  } else {
    return undefined;
  }
  return a === undefined ? `${os} (another processor)` : `${os}-${a}`;
}

/**
 * Why the bundled bridge cannot run here, when its package was made for another platform: VS Code
 * installs such a package without complaint, and on Linux spawn would run a foreign executable
 * with /bin/sh (its fallback for ENOEXEC). Another processor is let be on macOS and Windows, which
 * may run it through Rosetta or emulation.
 */
function otherPlatform(file: string): string | undefined {
  const here = `${process.platform}-${process.arch}`;
  const built = builtFor(file);
  if (built === undefined || built === here || (process.platform !== 'linux' && built.startsWith(`${process.platform}-`))) {
    return undefined;
  }
  return `it is built for ${built}, not for this machine (${here})`;
}

/**
 * Makes the bundled bridge executable if it is not: VS Code unpacks a package without the files'
 * modes on some platforms. Returns why it cannot be, or undefined.
 */
function makeExecutable(file: string): string | undefined {
  if (process.platform === 'win32') {
    return undefined;
  }
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return undefined;
  } catch {
    // not executable (yet)
  }
  try {
    fs.chmodSync(file, 0o755);
    output?.info(`made ${file} executable: the extension's package was unpacked without the file's mode`);
    return undefined;
  } catch (err) {
    return `it is not executable, and making it so failed (${String(err)})`;
  }
}

function expandHome(p: string): string {
  if (p === '~') {
    return os.homedir();
  }
  if (p.startsWith('~/') || p.startsWith('~\\')) {
    return path.join(os.homedir(), p.slice(2));
  }
  return p;
}

/**
 * The bridge's arguments: `--log-file FILE` when set, `--exclude GLOB` for each glob,
 * `--no-default-excludes` when the defaults are off, `--delay MS` when set and
 * `--automatic=false` when suggestions while typing start off, `--suggest-timeout MSms` and
 * `--prompt-timeout MSms` when set, then `--agent NAME` when an agent is named by its short name
 * (acpLspBridge.agentName, which wins over acpLspBridge.agent), else `--` and the agent's command
 * and arguments when an agent is set; without one the bridge starts its built-in agent.
 */
export function bridgeArgs(settings: { agent: string[]; agentName?: string; logFile: string; exclude?: string[]; defaultExcludes?: boolean; delay?: number; automatic?: boolean; suggestTimeout?: number; promptTimeout?: number }): string[] {
  const args: string[] = [];
  if (settings.logFile !== '') {
    args.push('--log-file', settings.logFile);
  }
  for (const glob of settings.exclude ?? []) {
    args.push('--exclude', glob);
  }
  if (settings.defaultExcludes === false) {
    args.push('--no-default-excludes');
  }
  if (settings.delay !== undefined && settings.delay > 0) {
    args.push('--delay', String(settings.delay));
  }
  if (settings.automatic === false) {
    args.push('--automatic=false');
  }
  if (settings.suggestTimeout !== undefined && settings.suggestTimeout > 0) {
    args.push('--suggest-timeout', `${settings.suggestTimeout}ms`);
  }
  if (settings.promptTimeout !== undefined && settings.promptTimeout > 0) {
    args.push('--prompt-timeout', `${settings.promptTimeout}ms`);
  }
  if (settings.agentName !== undefined && settings.agentName !== '') {
    // The bridge knows the command and its environment (GitHub Copilot: copilot-language-server
    // --acp, GITHUB_COPILOT_ACP_USE_CLI=0); it takes a name or a command, not both.
    args.push('--agent', settings.agentName);
  } else if (settings.agent.length > 0 && settings.agent[0] !== '') {
    args.push('--', ...settings.agent);
  }
  return args;
}

let output: vscode.LogOutputChannel | undefined;
let client: LanguageClient | undefined;
// The status bar item: the bridge's state; a click opens the menu.
let statusItem: vscode.StatusBarItem | undefined;
// The bridge's latest acp-lsp-bridge/status.
let lastStatus: BridgeStatus | undefined;
// The settings the running (or last tried) bridge was started with.
let started: Settings | undefined;
// The workspace settings the user was last told are ignored, to say it once.
let warnedIgnored = '';
// Starts and stops run one after the other, in the order they were asked for.
let queue: Promise<void> = Promise.resolve();

function serialize(step: () => Promise<void>): Promise<void> {
  queue = queue.then(step, step);
  return queue;
}

/**
 * Tells the user that the bridge could not be started: which one was tried and where it came from,
 * why, and what to do about it, with a button that opens the settings file for acpLspBridge.path.
 */
function cannotStart(bridge: Bridge, why: string): void {
  const file = pathSettingsFile();
  const setting = `${SECTION}.path to the bridge's absolute path in your ${file.where}`;
  // The platform's package, named as `make vsix` names it: VS Code's platforms are Node's.
  const vsix = `acp-lsp-bridge-${process.platform}-${process.arch}-….vsix`;
  let text: string;
  switch (bridge.from) {
    case 'settings':
      text = `could not start "${bridge.command}" (${SECTION}.path in your settings): ${why}. Set ${setting}${bridge.bundled !== undefined ? ', or remove it to use the bridge bundled with the extension' : ''}.`;
      break;
    case 'bundled':
      text = `could not start "${bridge.command}" (bundled with the extension): ${why}. Install the extension's package for this platform (${vsix}), or set ${setting}.`;
      break;
    case 'path':
      text = `could not start "${bridge.command}": ${why}, and no bridge is bundled with the extension (${SECTION}.path is not set). Install the extension's package for this platform (${vsix}), put acp-lsp-bridge on PATH, or set ${setting}.`;
      break;
  }
  output?.error(text);
  void vscode.window
    .showErrorMessage(`acp-lsp-bridge: ${text}`, file.open)
    .then((choice) => {
      if (choice === file.open) {
        void vscode.commands.executeCommand(file.command);
      }
    });
}

/** Says once that a workspace's settings for the bridge are ignored. */
function warnIgnored(keys: string[]): void {
  const said = keys.join(',');
  if (said === warnedIgnored) {
    return;
  }
  warnedIgnored = said;
  if (keys.length === 0) {
    return;
  }
  const text = `acp-lsp-bridge: this workspace's settings set ${keys.join(', ')}: ignored. The bridge, its agent, its log file and the files kept from the agent come from your User settings${vscode.env.remoteName !== undefined ? ' and Remote settings' : ''} only, so that a folder cannot choose what runs.`;
  output?.warn(text);
  void vscode.window.showWarningMessage(text);
}

// The suggestion the bridge last said is ready, until the extension's trigger takes it.
let ready: SuggestionReady | undefined;

function sameReady(r: SuggestionReady, document: vscode.TextDocument, position: vscode.Position): boolean {
  return (
    document.uri.toString() === vscode.Uri.parse(r.textDocument.uri).toString() &&
    document.version === r.textDocument.version &&
    position.line === r.position.line &&
    position.character === r.position.character
  );
}

/**
 * When the bridge's ready suggestion is for the active editor, unchanged since and with the cursor
 * where the bridge asked, triggers inline suggestions there now rather than after VS Code's own
 * wait; anything else is left to VS Code's own request.
 */
function suggestionReady(r: SuggestionReady): void {
  if (r === null || typeof r !== 'object' || typeof r.textDocument !== 'object' || typeof r.position !== 'object') {
    return;
  }
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || !editor.selection.isEmpty || !sameReady(r, editor.document, editor.selection.active)) {
    return;
  }
  ready = r;
  void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
}

/** Whether a request at position is the extension's own trigger for the ready suggestion. */
function takeReady(document: vscode.TextDocument, position: vscode.Position): boolean {
  const r = ready;
  ready = undefined;
  return r !== undefined && sameReady(r, document, position);
}

async function start(): Promise<void> {
  const settings = readSettings();
  started = settings;
  warnIgnored(setByWorkspace(vscode.workspace.getConfiguration(SECTION)));
  const args = bridgeArgs(settings);
  if (settings.agentName !== '' && settings.agent.length > 0) {
    output?.warn(`${SECTION}.agentName ("${settings.agentName}") names the agent: ${SECTION}.agent (${settings.agent.join(' ')}) is ignored; remove one of them`);
  }
  const bridge = chooseBridge(settings);
  const unusable = bridge.from === 'bundled' ? (otherPlatform(bridge.command) ?? makeExecutable(bridge.command)) : undefined;
  const found = unusable === undefined ? findExecutable(bridge.command) : { problem: unusable };
  if ('problem' in found) {
    client = undefined;
    showStatus({ state: 'failed', message: `acp-lsp-bridge could not start: ${found.problem}` });
    cannotStart(bridge, found.problem);
    return;
  }
  output?.info(describeBridge(bridge, found.file));
  output?.info(`starting ${[bridge.command, ...args].join(' ')}`);
  const serverOptions: ServerOptions = { command: bridge.command, args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    // The quieter display: while typing, no ghost text (the mark says where a suggestion is);
    // what you ask for (Alt+\, the reveal command) shows it.
    middleware: {
      provideInlineCompletionItems: (document, position, context, token, next) => {
        if (settings.display === 'mark' && context.triggerKind !== vscode.InlineCompletionTriggerKind.Invoke) {
          return undefined;
        }
        if (context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke && takeReady(document, position)) {
          // The extension's own trigger at a suggestion the bridge said is ready: asked as VS Code
          // asks while you type, so that the bridge answers with it rather than asking again.
          context = { ...context, triggerKind: vscode.InlineCompletionTriggerKind.Automatic };
        }
        return next(document, position, context, token);
      },
    },
    // acp-lsp-bridge/suggestionReady: the ghost text is asked for as soon as the bridge has it.
    // asksItself: VS Code asks for inline suggestions as the user types, so the bridge asks
    // ahead from the first change on.
    initializationOptions: { suggestionReady: true, asksItself: true },
    outputChannel: output,
  };
  const c = new LanguageClient(SECTION, 'acp-lsp-bridge', serverOptions, clientOptions);
  client = c;
  showStatus({ state: 'starting', message: 'acp-lsp-bridge: the bridge is starting.' });
  c.onNotification(STATUS_NOTIFICATION, (st: BridgeStatus) => {
    if (client === c && st !== null && typeof st === 'object' && typeof st.state === 'string') {
      showStatus(st);
    }
  });
  c.onNotification(READY_NOTIFICATION, (r: SuggestionReady) => {
    if (client === c && settings.display !== 'mark') {
      suggestionReady(r);
    }
  });
  try {
    await c.start();
  } catch (err) {
    showStatus({ state: 'failed', message: `acp-lsp-bridge could not start: ${String(err)}` });
    cannotStart(bridge, String(err));
    return;
  }
  // What the editor shows now: the focused file, and the diagnostics of every open file.
  sendFocus(vscode.window.activeTextEditor);
  sendDiagnostics(vscode.workspace.textDocuments.filter(mirrored).map((d) => d.uri));
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c === undefined || !c.needsStop()) {
    return; // never started, or failed to
  }
  try {
    await c.stop();
  } catch (err) {
    output?.warn(`stopping the bridge: ${String(err)}`);
  }
}

function restart(): Promise<void> {
  return serialize(async () => {
    await stop();
    await start();
  });
}

/** Restarts the bridge when the settings it was started with changed. */
function restartIfChanged(): Promise<void> {
  return serialize(async () => {
    if (started !== undefined && sameSettings(started, readSettings())) {
      return;
    }
    await stop();
    await start();
  });
}

/** Shows the bridge's state in the status bar: a short text, the message as its tooltip. */
function showStatus(st: BridgeStatus): void {
  lastStatus = st;
  if (statusItem === undefined) {
    return;
  }
  statusItem.text = STATUS_TEXT[st.state] ?? '$(question) NES';
  statusItem.tooltip = `${st.message}\n\nClick for the acp-lsp-bridge menu.`;
  statusItem.backgroundColor =
    st.state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : st.state === 'signingIn' || st.state === 'slow' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  statusItem.show();
}

/**
 * The status item's menu: suggestions while typing off or on (every file, this file), restart the
 * agent, sign in, show the log, restart the bridge.
 */
async function showMenu(): Promise<void> {
  const off = lastStatus?.state === 'off';
  const items: (vscode.QuickPickItem & { run: () => unknown })[] = [
    {
      label: off ? 'Turn suggestions while typing on' : 'Turn suggestions while typing off',
      description: 'every file',
      run: () => setAutomatic(!off ? 'disable' : 'enable', false),
    },
    {
      label: off ? 'Turn suggestions while typing on for this file' : 'Turn suggestions while typing off for this file',
      run: () => setAutomatic(!off ? 'disable' : 'enable', true),
    },
    { label: 'Restart the agent', run: () => runServerCommand(SERVER_COMMANDS.restart, () => []) },
    { label: 'Sign in to the agent', run: () => runServerCommand(SERVER_COMMANDS.signIn, () => []) },
    { label: 'Show the log', run: () => output?.show(true) },
    { label: 'Restart the bridge', run: restart },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: `acp-lsp-bridge: ${lastStatus?.message ?? 'not started'}`,
    placeHolder: 'acp-lsp-bridge',
  });
  if (picked !== undefined) {
    await picked.run();
  }
}

// The quieter display (acpLspBridge.display "mark"): after each change of the active file, the
// suggestion nearest the cursor, anywhere in the file (the bridge's textDocument/copilotInlineEdit),
// is marked in the gutter and the overview ruler, with a hint at the end of the cursor's line:
// "⇥ next edit, line 42" (or "here"). The reveal command jumps to it, then shows it as ghost text.
const MARK_ICON = vscode.Uri.parse(
  'data:image/svg+xml;utf8,' +
    encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path d="M3 4l5 4-5 4z M10 4h2v8h-2z" fill="#3794ff"/></svg>'),
);
let markDecoration: vscode.TextEditorDecorationType | undefined;
let hintDecoration: vscode.TextEditorDecorationType | undefined;
/** The marked suggestion: its document and version, its range. */
let mark: { uri: string; version: number; range: vscode.Range } | undefined;
let markTimer: NodeJS.Timeout | undefined;

function clearMark(): void {
  mark = undefined;
  for (const editor of vscode.window.visibleTextEditors) {
    if (markDecoration !== undefined) editor.setDecorations(markDecoration, []);
    if (hintDecoration !== undefined) editor.setDecorations(hintDecoration, []);
  }
}

function drawMark(editor: vscode.TextEditor): void {
  if (mark === undefined || markDecoration === undefined || hintDecoration === undefined || editor.document.uri.toString() !== mark.uri) {
    return;
  }
  const line = editor.selection.active.line;
  const here = line >= mark.range.start.line && line <= mark.range.end.line;
  const end = editor.document.lineAt(line).range.end;
  editor.setDecorations(markDecoration, [new vscode.Range(mark.range.start.line, 0, mark.range.start.line, 0)]);
  editor.setDecorations(hintDecoration, [
    {
      range: new vscode.Range(end, end),
      renderOptions: { after: { contentText: here ? '⇥ next edit, here' : `⇥ next edit, line ${mark.range.start.line + 1}` } },
    },
  ]);
}

/** Asks the bridge for the suggestion nearest the cursor, and marks it unless the file changed meanwhile. */
async function askMark(editor: vscode.TextEditor): Promise<void> {
  const c = client;
  if (c === undefined || !c.isRunning() || !mirrored(editor.document)) {
    return;
  }
  const version = editor.document.version;
  try {
    const res = (await c.sendRequest('textDocument/copilotInlineEdit', {
      textDocument: { uri: c.code2ProtocolConverter.asUri(editor.document.uri), version },
      position: c.code2ProtocolConverter.asPosition(editor.selection.active),
      context: { triggerKind: 2 },
    })) as { edits?: { range: Parameters<typeof c.protocol2CodeConverter.asRange>[0] }[] } | null;
    const edit = res?.edits?.[0];
    const range = edit === undefined ? undefined : c.protocol2CodeConverter.asRange(edit.range);
    if (editor.document.version !== version || range === undefined) {
      return;
    }
    mark = { uri: editor.document.uri.toString(), version, range };
    drawMark(editor);
  } catch (err) {
    output?.debug(`textDocument/copilotInlineEdit: ${String(err)}`);
  }
}

/** The reveal command: go to the marked suggestion; on its line, show it as ghost text. */
async function reveal(): Promise<void> {
  const editor = activeEditor();
  if (editor === undefined || mark === undefined || editor.document.uri.toString() !== mark.uri) {
    void vscode.window.setStatusBarMessage('acp-lsp-bridge: no marked suggestion here', 3000);
    return;
  }
  const line = editor.selection.active.line;
  if (line < mark.range.start.line || line > mark.range.end.line) {
    editor.selection = new vscode.Selection(mark.range.end, mark.range.end);
    editor.revealRange(mark.range);
    drawMark(editor);
    return;
  }
  clearMark();
  // Run from the palette, the editor gets the focus back only as it closes: give it first.
  await vscode.window.showTextDocument(editor.document, editor.viewColumn);
  await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
}

/** Whether the bridge mirrors the document (see documentSelector). */
function mirrored(doc: vscode.TextDocument): boolean {
  return doc.uri.scheme === 'file' || doc.uri.scheme === 'untitled';
}

/**
 * acp-lsp-bridge/didFocus for the editor the user is in: the file, the cursor and the visible
 * lines. The client sends any pending didOpen before it, so the bridge knows the file.
 */
function sendFocus(editor: vscode.TextEditor | undefined): void {
  const c = client;
  if (editor === undefined || !mirrored(editor.document) || c === undefined || !c.isRunning()) {
    return;
  }
  const conv = c.code2ProtocolConverter;
  const visible = editor.visibleRanges;
  const params: Record<string, unknown> = {
    textDocument: { uri: conv.asUri(editor.document.uri) },
    position: conv.asPosition(editor.selection.active),
  };
  if (visible.length > 0) {
    params.visibleRange = {
      start: { line: visible[0].start.line, character: 0 },
      end: { line: visible[visible.length - 1].end.line, character: 0 },
    };
  }
  c.sendNotification(NOTIFICATIONS.didFocus, params).catch((err) => output?.warn(`${NOTIFICATIONS.didFocus}: ${String(err)}`));
}

// Diagnostics are sent one document after another, each read when its turn comes: a later change
// can never be overtaken by an earlier one.
let diagnosticsQueue: Promise<void> = Promise.resolve();

/**
 * acp-lsp-bridge/diagnostics for each of uris that the bridge mirrors: every diagnostic VS Code
 * shows for it, from every source, replacing what the bridge had.
 */
function sendDiagnostics(uris: readonly vscode.Uri[]): void {
  for (const uri of uris) {
    diagnosticsQueue = diagnosticsQueue.then(async () => {
      const c = client;
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      if (c === undefined || !c.isRunning() || doc === undefined || !mirrored(doc)) {
        return;
      }
      try {
        const diagnostics = await c.code2ProtocolConverter.asDiagnostics(vscode.languages.getDiagnostics(uri));
        await c.sendNotification(NOTIFICATIONS.diagnostics, { textDocument: { uri: c.code2ProtocolConverter.asUri(uri) }, diagnostics });
      } catch (err) {
        output?.warn(`${NOTIFICATIONS.diagnostics}: ${String(err)}`);
      }
    });
  }
}

/** The running client, or undefined after telling the user that the bridge is not running. */
function running(): LanguageClient | undefined {
  const c = client;
  if (c === undefined || !c.isRunning()) {
    void vscode.window.showWarningMessage('acp-lsp-bridge is not running: see the acp-lsp-bridge output.');
    return undefined;
  }
  return c;
}

/** Runs one of the bridge's commands through workspace/executeCommand; its answer, or undefined. */
async function runServerCommand(command: string, args: (c: LanguageClient) => unknown[]): Promise<unknown> {
  const c = running();
  if (c === undefined) {
    return undefined;
  }
  try {
    return await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: args(c) });
  } catch (err) {
    output?.error(`${command}: ${String(err)}`);
    return undefined;
  }
}

/**
 * acp-lsp-bridge.toggle (or .enable, .disable: op) for every file, or (forFile) for the active
 * editor's file: suggestions while typing off or on, for as long as the bridge runs. Says what is
 * now in force.
 */
async function setAutomatic(op: 'toggle' | 'enable' | 'disable', forFile: boolean): Promise<void> {
  const editor = activeEditor();
  if (forFile && editor === undefined) {
    void vscode.window.showInformationMessage('acp-lsp-bridge: open a file to turn its suggestions on or off.');
    return;
  }
  const res = await runServerCommand(SERVER_COMMANDS[op], (c) =>
    forFile && editor !== undefined ? [{ uri: c.code2ProtocolConverter.asUri(editor.document.uri) }] : [],
  );
  if (res === undefined || res === null || typeof res !== 'object') {
    return;
  }
  const on = (res as { automatic?: unknown }).automatic === true;
  const where = forFile && editor !== undefined ? path.basename(editor.document.uri.fsPath) : 'every file';
  const text = `acp-lsp-bridge: suggestions while typing are ${on ? 'on' : 'off'} for ${where}${on ? '' : ' (Alt+Enter still asks)'}`;
  output?.info(text);
  vscode.window.setStatusBarMessage(text, 5000);
}

/** The active editor, when the bridge mirrors its document (see documentSelector). */
function activeEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    return undefined;
  }
  const scheme = editor.document.uri.scheme;
  return scheme === 'file' || scheme === 'untitled' ? editor : undefined;
}

/** acp-lsp-bridge.suggest [{uri, position}] at the active editor's cursor. */
async function suggestNow(): Promise<void> {
  const editor = activeEditor();
  if (editor === undefined) {
    void vscode.window.showInformationMessage('acp-lsp-bridge: open a file to ask for a suggestion.');
    return;
  }
  // The client offers only utf-16 positions, VS Code's own, so the bridge negotiates utf-16.
  await runServerCommand(SERVER_COMMANDS.suggest, (c) => [
    {
      uri: c.code2ProtocolConverter.asUri(editor.document.uri),
      position: c.code2ProtocolConverter.asPosition(editor.selection.active),
    },
  ]);
}

/**
 * acp-lsp-bridge.reject [{uri}] for the active editor's document, or [] (every suggestion) without
 * one; then hides the ghost text, which the dismissed suggestion no longer backs.
 */
async function dismiss(): Promise<void> {
  const editor = activeEditor();
  await runServerCommand(SERVER_COMMANDS.reject, (c) =>
    editor === undefined ? [] : [{ uri: c.code2ProtocolConverter.asUri(editor.document.uri) }],
  );
  if (editor !== undefined) {
    await vscode.commands.executeCommand('editor.action.inlineSuggest.hide');
  }
}

export function activate(context: vscode.ExtensionContext): void {
  extensionPath = context.extensionPath;
  output = vscode.window.createOutputChannel('acp-lsp-bridge', { log: true });
  statusItem = vscode.window.createStatusBarItem('acpLspBridge.status', vscode.StatusBarAlignment.Right, 100);
  statusItem.name = 'acp-lsp-bridge';
  statusItem.command = COMMANDS.showMenu;
  markDecoration = vscode.window.createTextEditorDecorationType({
    gutterIconPath: MARK_ICON,
    gutterIconSize: 'contain',
    overviewRulerColor: new vscode.ThemeColor('editorInfo.foreground'),
    overviewRulerLane: vscode.OverviewRulerLane.Right,
  });
  hintDecoration = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 2em' },
  });
  context.subscriptions.push(
    output,
    statusItem,
    vscode.commands.registerCommand(COMMANDS.suggestNow, suggestNow),
    vscode.commands.registerCommand(COMMANDS.dismiss, dismiss),
    vscode.commands.registerCommand(COMMANDS.restartAgent, () => runServerCommand(SERVER_COMMANDS.restart, () => [])),
    vscode.commands.registerCommand(COMMANDS.signIn, () => runServerCommand(SERVER_COMMANDS.signIn, () => [])),
    vscode.commands.registerCommand(COMMANDS.restartServer, restart),
    vscode.commands.registerCommand(COMMANDS.toggleAutomatic, () => setAutomatic('toggle', false)),
    vscode.commands.registerCommand(COMMANDS.toggleAutomaticForFile, () => setAutomatic('toggle', true)),
    vscode.commands.registerCommand(COMMANDS.showMenu, showMenu),
    vscode.commands.registerCommand(COMMANDS.reveal, reveal),
    { dispose: () => (markDecoration?.dispose(), hintDecoration?.dispose()) },
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (started?.display !== 'mark' || !mirrored(e.document)) {
        return;
      }
      clearMark();
      if (markTimer !== undefined) clearTimeout(markTimer);
      markTimer = setTimeout(() => {
        const editor = vscode.window.activeTextEditor;
        if (editor !== undefined && editor.document === e.document) void askMark(editor);
      }, 150);
    }),
    vscode.window.onDidChangeTextEditorSelection((e) => {
      if (mark !== undefined) drawMark(e.textEditor);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (SETTINGS.some((s) => e.affectsConfiguration(`${SECTION}.${s}`))) {
        void restartIfChanged();
      }
    }),
    vscode.window.onDidChangeActiveTextEditor(sendFocus),
    vscode.languages.onDidChangeDiagnostics((e) => sendDiagnostics(e.uris)),
    vscode.workspace.onDidOpenTextDocument((doc) => {
      // Diagnostics that were there before the file was opened (a build's problems, say).
      if (mirrored(doc) && vscode.languages.getDiagnostics(doc.uri).length > 0) {
        sendDiagnostics([doc.uri]);
      }
    }),
  );
  void serialize(start);
}

export function deactivate(): Promise<void> {
  return serialize(stop);
}
