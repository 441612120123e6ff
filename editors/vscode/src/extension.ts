// acp-lsp-bridge for VS Code: starts the bridge as a language server through vscode-languageclient.
//
// The client does the rest: textDocument/inlineCompletion (ghost text), code actions, and the
// server's commands (acp-lsp-bridge.accept and the others, which vscode-languageclient registers
// from executeCommandProvider). This file adds the settings, palette commands with the right
// arguments, and a restart when the settings change.

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

/** The settings that change how the bridge is started: a change restarts it. */
export const SETTINGS = ['path', 'agent', 'logFile'] as const;

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

function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const agent = config.get<unknown>('agent', []);
  return {
    path: expandHome(config.get<string>('path', 'acp-lsp-bridge').trim()) || 'acp-lsp-bridge',
    agent: Array.isArray(agent) ? agent.filter((a): a is string => typeof a === 'string') : [],
    logFile: expandHome(config.get<string>('logFile', '').trim()),
  };
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
// Starts and stops run one after the other, in the order they were asked for.
let queue: Promise<void> = Promise.resolve();

function serialize(step: () => Promise<void>): Promise<void> {
  queue = queue.then(step, step);
  return queue;
}

async function start(): Promise<void> {
  const settings = readSettings();
  const args = bridgeArgs(settings);
  const serverOptions: ServerOptions = { command: settings.path, args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    outputChannel: output,
  };
  output?.info(`starting ${[settings.path, ...args].join(' ')}`);
  const c = new LanguageClient(SECTION, 'acp-lsp-bridge', serverOptions, clientOptions);
  client = c;
  try {
    await c.start();
  } catch (err) {
    output?.error(`could not start ${settings.path}: ${String(err)}`);
    const open = 'Open Settings';
    void vscode.window
      .showErrorMessage(
        `acp-lsp-bridge: could not start "${settings.path}". Is it installed? Set acpLspBridge.path to the bridge executable.`,
        open,
      )
      .then((choice) => {
        if (choice === open) {
          void vscode.commands.executeCommand('workbench.action.openSettings', SECTION);
        }
      });
  }
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

/** acp-lsp-bridge.reject [{uri}] for the active editor's document, or [] (every suggestion) without one. */
function dismiss(): Promise<void> {
  const editor = activeEditor();
  return runServerCommand(SERVER_COMMANDS.reject, (c) =>
    editor === undefined ? [] : [{ uri: c.code2ProtocolConverter.asUri(editor.document.uri) }],
  );
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
        void restart();
      }
    }),
  );
  void serialize(start);
}

export function deactivate(): Promise<void> {
  return serialize(stop);
}
