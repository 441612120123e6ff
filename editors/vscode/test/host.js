// A stand-in for VS Code, for a smoke test of the compiled extension outside the editor (run by
// e2e/vscode_test.go after `npm run compile`):
//
//   node test/host.js SCENARIO.json
//
// It loads out/extension.js with a fake `vscode` module: settings, commands, an output channel,
// message boxes, the status bar item's texts and the quick picks' items are recorded; every other
// API is an inert stub. The real vscode-languageclient then
// starts the real bridge. scenario.settings are the User settings, scenario.workspaceSettings (if
// any) a workspace's; scenario.extensionPath (default: this folder) is where the extension is
// installed, so where its bundled bridge is looked for (bin/acp-lsp-bridge), and scenario.env is
// added to the environment (PATH, say). The scenario activates the extension with
// scenario.settings, waits for the bridge's "is ready" log message, runs the palette commands of
// scenario.run ({command, pick?, waitFor?, waitStatus?}: pick chooses that label in the quick pick
// the command shows; waits for a message containing waitFor, and for the status bar item to read
// waitStatus, after each), changes
// the settings to scenario.changed (the extension restarts the bridge), waits for the new bridge,
// deactivates, and prints what it recorded as one JSON object. With scenario.failsToStart it only
// waits for the extension to say that the bridge could not start.
'use strict';

const fs = require('fs');
const Module = require('module');
const path = require('path');

const scenario = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let settings = scenario.settings;
Object.assign(process.env, scenario.env || {});

// scenario.document {path, languageId, text, cursor: {line, character}}: an open file, in the
// active editor with the cursor at `cursor` (VS Code's utf-16 columns).
function fakeDocument(d) {
  const uri = {
    scheme: 'file',
    path: d.path,
    fsPath: d.path,
    toString: () => 'file://' + d.path.split('/').map(encodeURIComponent).join('/'),
  };
  uri.toJSON = () => uri.toString();
  const lines = d.text.split('\n');
  return {
    uri,
    fileName: d.path,
    languageId: d.languageId,
    version: 1,
    isDirty: false,
    isClosed: false,
    isUntitled: false,
    lineCount: lines.length,
    eol: 1,
    getText: () => d.text,
    lineAt: (l) => ({ text: lines[typeof l === 'number' ? l : l.line] }),
  };
}
const document = scenario.document ? fakeDocument(scenario.document) : undefined;
const editor = document && {
  document,
  selection: { active: scenario.document.cursor, anchor: scenario.document.cursor },
  selections: [],
  visibleRanges: [],
};

// languages.match for the filters this extension uses: {scheme?, language?}, or a language id.
function match(selector, doc) {
  const filters = Array.isArray(selector) ? selector : [selector];
  const ok = (f) =>
    typeof f === 'string'
      ? f === doc.languageId || f === '*'
      : (!f.scheme || f.scheme === doc.uri.scheme) && (!f.language || f.language === doc.languageId) && !f.pattern && !f.notebookType;
  return filters.some(ok) ? 10 : 0;
}
const record = { registered: [], errors: [], channel: [], messages: [], ran: [], statusBar: [], quickPicks: [] };
const live = new Map(); // command id → handler
const configListeners = [];

// stub: any property is the stub, calling it returns the stub, `new` on it returns the stub; a class
// extending it gets an ordinary instance. It is not a thenable and iterates as empty.
const stub = new Proxy(function () {}, {
  get: (_t, p) => {
    if (p === 'prototype') return {};
    if (p === 'then') return undefined;
    if (p === Symbol.iterator) return function* () {};
    if (p === Symbol.toPrimitive) return () => '';
    return stub;
  },
  apply: () => stub,
  construct: (_t, _args, newTarget) => (newTarget === stub ? stub : Reflect.construct(function () {}, [], newTarget)),
});
const orStub = (o) => new Proxy(o, { get: (t, p) => (p in t ? t[p] : stub) });
const disposable = (f) => ({ dispose: f || (() => {}) });
const noEvent = () => disposable();

const channel = {
  name: 'acp-lsp-bridge',
  logLevel: 3,
  onDidChangeLogLevel: noEvent,
  append() {},
  appendLine: (m) => record.channel.push(['line', String(m)]),
  replace() {},
  clear() {},
  show() {},
  hide() {},
  dispose() {},
};
for (const level of ['trace', 'debug', 'info', 'warn', 'error']) {
  channel[level] = (m) => record.channel.push([level, String(m)]);
}

// The status bar item: every text it shows is recorded (statusBar), with its tooltip.
function statusBarItem() {
  let text = '';
  const item = {
    name: '',
    command: undefined,
    tooltip: '',
    backgroundColor: undefined,
    get text() {
      return text;
    },
    set text(t) {
      text = t;
      record.statusBar.push(t);
    },
    show() {},
    hide() {},
    dispose() {},
  };
  return item;
}

// A quick pick: its items' labels are recorded (quickPicks); the step's `pick` (a label) is chosen.
let nextPick;
async function showQuickPick(items) {
  const list = await items;
  record.quickPicks.push(list.map((i) => i.label));
  return list.find((i) => i.label === nextPick);
}

const message = (kind) => async (text) => {
  record.messages.push([kind, String(text)]);
  return undefined;
};

const vscode = orStub({
  version: '1.91.0',
  LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
  workspace: orStub({
    // Every setting is a User setting here; a scenario's workspaceSettings are a workspace's.
    getConfiguration: (section) => ({
      get: (key, dflt) => {
        const w = (scenario.workspaceSettings || {})[`${section}.${key}`];
        const v = w === undefined ? settings[`${section}.${key}`] : w;
        return v === undefined ? dflt : v;
      },
      has: () => false,
      inspect: (key) => ({
        key: `${section}.${key}`,
        globalValue: settings[`${section}.${key}`],
        workspaceValue: (scenario.workspaceSettings || {})[`${section}.${key}`],
      }),
      update: async () => {},
    }),
    onDidChangeConfiguration: (listener) => {
      configListeners.push(listener);
      return disposable();
    },
    workspaceFolders: undefined,
    textDocuments: document ? [document] : [],
    notebookDocuments: [],
  }),
  window: orStub({
    createOutputChannel: () => channel,
    activeTextEditor: editor,
    visibleTextEditors: editor ? [editor] : [],
    showErrorMessage: message('error'),
    showWarningMessage: message('warning'),
    showInformationMessage: message('info'),
    createStatusBarItem: statusBarItem,
    showQuickPick,
  }),
  StatusBarAlignment: { Left: 1, Right: 2 },
  languages: orStub({ match, getDiagnostics: () => [] }),
  env: orStub({ remoteName: undefined }),
  commands: {
    // VS Code refuses a command id that is already registered: so does this.
    registerCommand: (id, handler) => {
      if (live.has(id)) {
        record.errors.push(`command '${id}' already exists`);
        throw new Error(`command '${id}' already exists`);
      }
      live.set(id, handler);
      record.registered.push(id);
      return disposable(() => live.delete(id));
    },
    executeCommand: async () => undefined,
  },
});

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: vscode };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, cond, ms = 20000) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) {
    if (cond()) return;
  }
  throw new Error(`timed out waiting for ${what}`);
}
const seen = (text, from) =>
  record.channel.slice(from.channel).some(([, m]) => m.includes(text)) ||
  record.messages.slice(from.messages).some(([, m]) => m.includes(text));
const mark = () => ({ channel: record.channel.length, messages: record.messages.length });

async function main() {
  const ext = require(path.join(__dirname, '..', 'out', 'extension.js'));
  const context = { subscriptions: [], extensionPath: scenario.extensionPath || path.join(__dirname, '..') };
  const start = mark();
  ext.activate(context);
  if (scenario.failsToStart) {
    // A bridge that cannot start: the extension says so, and deactivates cleanly.
    await until('the error about the bridge', () => seen('could not start', start));
    await ext.deactivate();
    return;
  }
  await until('the bridge to say the agent is ready', () => seen('is ready', start));
  // Each step: a palette command, then (if given) a text the bridge or the extension shows after it.
  for (const step of scenario.run || []) {
    const from = mark();
    nextPick = step.pick;
    await live.get(step.command)();
    record.ran.push(step.command);
    if (step.waitFor) {
      await until(`"${step.waitFor}" after ${step.command}`, () => seen(step.waitFor, from));
    }
    if (step.waitStatus) {
      await until(`the status bar to read "${step.waitStatus}" after ${step.command}`, () => record.statusBar[record.statusBar.length - 1] === step.waitStatus);
    }
  }
  if (scenario.changed) {
    const from = mark();
    settings = scenario.changed;
    const event = { affectsConfiguration: (s) => s === 'acpLspBridge' || s.startsWith('acpLspBridge.') };
    for (const l of configListeners) l(event);
    await until('the restarted bridge to say the agent is ready', () => seen('is ready', from));
  }
  await ext.deactivate();
  for (const d of context.subscriptions) d.dispose();
}

main().then(
  () => {
    process.stdout.write(JSON.stringify(record) + '\n');
    process.exit(0);
  },
  (err) => {
    record.errors.push(String(err && err.stack ? err.stack : err));
    process.stdout.write(JSON.stringify(record) + '\n');
    process.exit(1);
  },
);
