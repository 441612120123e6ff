// acp-lsp-bridge for VS Code: starts the bridge as a language server through vscode-languageclient.
//
// The client does the rest: textDocument/inlineCompletion (ghost text), code actions, and the
// server's commands (acp-lsp-bridge.accept and the others, which vscode-languageclient registers
// from executeCommandProvider). This file adds the settings, palette commands with the right
// arguments, a restart when the settings change, and the two notifications that tell the bridge
// what the editor shows: the focused file and every file's diagnostics.

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
 * The settings that choose what runs (the bridge, its agent, its log file): a change restarts the
 * bridge. They are read from the User settings only (in a remote window, the Remote settings
 * override them), never from a workspace's settings: a folder you open must not choose the
 * programs the extension starts. `path` is `machine`-scoped (each host has its own bridge: in a
 * remote window it is read from the Remote settings), the others `window`-scoped.
 */
export const SETTINGS = ['path', 'agent', 'logFile'] as const;

/** The bridge's notifications beyond LSP (lspside.NotifyDidFocus, lspside.NotifyDiagnostics). */
export const NOTIFICATIONS = {
  didFocus: 'acp-lsp-bridge/didFocus',
  diagnostics: 'acp-lsp-bridge/diagnostics',
} as const;

/** The bridge's commands (its executeCommandProvider), run through workspace/executeCommand. */
export const SERVER_COMMANDS = {
  accept: 'acp-lsp-bridge.accept',
  reject: 'acp-lsp-bridge.reject',
  suggest: 'acp-lsp-bridge.suggest',
  signIn: 'acp-lsp-bridge.signIn',
  restart: 'acp-lsp-bridge.restart',
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
} as const;

interface Settings {
  path: string;
  agent: string[];
  logFile: string;
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
  const bridge = userSetting<unknown>(config, 'path', 'acp-lsp-bridge');
  const logFile = userSetting<unknown>(config, 'logFile', '');
  return {
    path: (typeof bridge === 'string' && expandHome(bridge.trim())) || 'acp-lsp-bridge',
    agent: Array.isArray(agent) ? agent.filter((a): a is string => typeof a === 'string') : [],
    logFile: typeof logFile === 'string' ? expandHome(logFile.trim()) : '',
  };
}

function sameSettings(a: Settings, b: Settings): boolean {
  return a.path === b.path && a.logFile === b.logFile && a.agent.length === b.agent.length && a.agent.every((x, i) => x === b.agent[i]);
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

/**
 * Why `command` cannot be started, or undefined when it can: an absolute or relative path must be
 * an executable file, a bare name must be one in a folder of PATH (as spawn looks it up).
 */
function executableProblem(command: string): string | undefined {
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
  if (command.includes('/') || (windows && command.includes('\\'))) {
    if (suffixes.some((e) => executable(command + e))) {
      return undefined;
    }
    return fs.existsSync(command) ? 'it is not an executable file' : 'there is no such file';
  }
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter((d) => d !== '');
  if (dirs.some((d) => suffixes.some((e) => executable(path.join(d, command + e))))) {
    return undefined;
  }
  return 'it is not on PATH';
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
 * The bridge's arguments: `--log-file FILE` when set, then `--` and the agent's command and
 * arguments when an agent is set; without one the bridge starts its built-in agent.
 */
export function bridgeArgs(settings: { agent: string[]; logFile: string }): string[] {
  const args: string[] = [];
  if (settings.logFile !== '') {
    args.push('--log-file', settings.logFile);
  }
  if (settings.agent.length > 0 && settings.agent[0] !== '') {
    args.push('--', ...settings.agent);
  }
  return args;
}

let output: vscode.LogOutputChannel | undefined;
let client: LanguageClient | undefined;
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

/** Tells the user that the bridge could not be started, which path was tried, and where to set it. */
function cannotStart(command: string, why: string): void {
  const file = pathSettingsFile();
  output?.error(`could not start ${command}: ${why}`);
  void vscode.window
    .showErrorMessage(
      `acp-lsp-bridge: could not start "${command}": ${why}. Set ${SECTION}.path to the bridge's absolute path in your ${file.where}.`,
      file.open,
    )
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
  const text = `acp-lsp-bridge: this workspace's settings set ${keys.join(', ')}: ignored. The bridge, its agent and its log file come from your User settings${vscode.env.remoteName !== undefined ? ' and Remote settings' : ''} only, so that a folder cannot choose what runs.`;
  output?.warn(text);
  void vscode.window.showWarningMessage(text);
}

async function start(): Promise<void> {
  const settings = readSettings();
  started = settings;
  warnIgnored(setByWorkspace(vscode.workspace.getConfiguration(SECTION)));
  const args = bridgeArgs(settings);
  output?.info(`starting ${[settings.path, ...args].join(' ')}`);
  const problem = executableProblem(settings.path);
  if (problem !== undefined) {
    client = undefined;
    cannotStart(settings.path, problem);
    return;
  }
  const serverOptions: ServerOptions = { command: settings.path, args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    outputChannel: output,
  };
  const c = new LanguageClient(SECTION, 'acp-lsp-bridge', serverOptions, clientOptions);
  client = c;
  try {
    await c.start();
  } catch (err) {
    cannotStart(settings.path, String(err));
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

/** Runs one of the bridge's commands through workspace/executeCommand. */
async function runServerCommand(command: string, args: (c: LanguageClient) => unknown[]): Promise<void> {
  const c = running();
  if (c === undefined) {
    return;
  }
  try {
    await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: args(c) });
  } catch (err) {
    output?.error(`${command}: ${String(err)}`);
  }
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
function suggestNow(): Promise<void> {
  const editor = activeEditor();
  if (editor === undefined) {
    void vscode.window.showInformationMessage('acp-lsp-bridge: open a file to ask for a suggestion.');
    return Promise.resolve();
  }
  // The client offers only utf-16 positions, VS Code's own, so the bridge negotiates utf-16.
  return runServerCommand(SERVER_COMMANDS.suggest, (c) => [
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
  output = vscode.window.createOutputChannel('acp-lsp-bridge', { log: true });
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand(COMMANDS.suggestNow, suggestNow),
    vscode.commands.registerCommand(COMMANDS.dismiss, dismiss),
    vscode.commands.registerCommand(COMMANDS.restartAgent, () => runServerCommand(SERVER_COMMANDS.restart, () => [])),
    vscode.commands.registerCommand(COMMANDS.signIn, () => runServerCommand(SERVER_COMMANDS.signIn, () => [])),
    vscode.commands.registerCommand(COMMANDS.restartServer, restart),
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
