// lsp-prompts-e2e.mjs: drives acp-lsp-bridge as an LSP client built on Microsoft's
// vscode-languageserver-protocol + vscode-jsonrpc, with session-agent.mjs (the official ACP SDK,
// sessions and no Next Edit Suggestions) as the agent, named after `--` as a user configures it:
// the bridge asks the agent through session/prompt (acpside/prompts.go). Run by
// e2e/prompts_test.go (TestSDKPeerPrompts).
//
// Usage: PEERS_NODE_MODULES=... node lsp-prompts-e2e.mjs --bridge PATH [--timeout-ms 20000] [--keep]
// Exits 0 when every check passed, 1 otherwise (with the reasons).
//
// The scenario: main.go, where the user typed "fo(" twice, and the agent predicts "foo("
// (SESSION_AGENT_RULES). An automatic inline completion (triggerKind Automatic, as while typing)
// answers nothing and prompts nothing; an invoked one (triggerKind Invoked) shows the edit of the
// first call, which is accepted as an editor does (the text inserted, didChange, the item's
// command); a code action requested by the user (CodeActionTriggerKind.Invoked) at the second call
// offers its edit, which is applied (workspace edit, didChange, the action's command). Then the
// text is checked, the agent's log (one session, two prompts, no write), the file on disk
// (unchanged), the progress shown while the agent was asked, and the bridge's exit.

import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import { pathToFileURL, fileURLToPath } from "node:url";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const args = process.argv.slice(2);
function opt(name, def) {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = args[i + 1];
  return v === undefined || v.startsWith("--") ? true : v;
}
const BRIDGE = opt("bridge", undefined);
const TIMEOUT_MS = Number(opt("timeout-ms", "20000"));
const KEEP = opt("keep", false) === true;
const MODULES = process.env.PEERS_NODE_MODULES;
if (!BRIDGE || !MODULES) {
  console.error("usage: PEERS_NODE_MODULES=... node lsp-prompts-e2e.mjs --bridge PATH [--timeout-ms 20000] [--keep]");
  process.exit(2);
}
const require = createRequire(MODULES.replace(/\/?$/, "/"));
const lsp = require("vscode-languageserver-protocol/node");
const here = path.dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------------------------------------
// Reporting.

const failures = [];
let step = "start";
const show = (v) => JSON.stringify(v);
function fail(msg) {
  failures.push(`[${step}] ${msg}`);
}
function check(cond, msg) {
  if (!cond) fail(msg);
  return cond;
}

// ---------------------------------------------------------------------------------------------
// The workspace, and the agent's log outside it (the bridge watches the workspace during a prompt).

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lsp-prompts-e2e-"));
const root = path.join(tmp, "work");
fs.mkdirSync(root);
const AGENT_LOG = path.join(tmp, "agent.jsonl");
const BRIDGE_LOG = path.join(tmp, "bridge.log");
const FILE = path.join(root, "main.go");
// The two calls lie farther apart than the editable region around a cursor (the model engine's 4
// lines above and 8 below), so that each request's suggestion is the edit of its own call.
const FILLER = Array.from({ length: 10 }, (_, i) => `// line ${i + 1} between f and g\n`).join("");
const TEXT = `package main\n\nfunc f() {\n\tfo(1)\n}\n\n${FILLER}\nfunc g() {\n\tfo(2)\n}\n`;
const WANT = TEXT.replace("\tfo(1)", "\tfoo(1)").replace("\tfo(2)", "\tfoo(2)");
fs.writeFileSync(FILE, TEXT);
const URI = pathToFileURL(FILE).href;
const ROOT_URI = pathToFileURL(root).href;

function agentLog() {
  let text = "";
  try {
    text = fs.readFileSync(AGENT_LOG, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

// ---------------------------------------------------------------------------------------------
// The bridge, with the agent after `--` and its settings in the environment it inherits.

const bridge = spawn(BRIDGE, ["--log-file", BRIDGE_LOG, "--log-level", "debug", "--", process.execPath, path.join(here, "session-agent.mjs")], {
  env: {
    ...process.env,
    SESSION_AGENT_MODE: "text",
    SESSION_AGENT_MODES: "1",
    SESSION_AGENT_LOG: AGENT_LOG,
    SESSION_AGENT_RULES: JSON.stringify([{ find: "fo(", replace: "foo(" }]),
  },
  cwd: root,
  stdio: ["pipe", "pipe", "pipe"],
});
let bridgeStderr = "";
bridge.stderr.on("data", (d) => (bridgeStderr += d.toString()));
const bridgeExited = new Promise((resolve) => bridge.on("exit", (code, signal) => resolve({ code, signal })));

const conn = lsp.createProtocolConnection(new lsp.StreamMessageReader(bridge.stdout), new lsp.StreamMessageWriter(bridge.stdin));
const fromServer = [];
// As vscode-languageclient does: a progress the server creates is followed through its token
// (the library hands each $/progress to the handler of its token).
conn.onRequest(lsp.WorkDoneProgressCreateRequest.type, (params) => {
  fromServer.push({ method: "window/workDoneProgress/create", params });
  conn.onProgress(lsp.WorkDoneProgress.type, params.token, (value) => fromServer.push({ method: "$/progress", params: { token: params.token, value } }));
  return null;
});
conn.onUnhandledProgress((params) => fail(`$/progress for a token never created: ${show(params)}`));
conn.onRequest((method, params) => {
  fromServer.push({ method, params });
  if (method === "workspace/applyEdit") fail(`the bridge applied an edit by itself: ${show(params)}`);
  return null;
});
conn.onNotification((method, params) => fromServer.push({ method, params }));
conn.onError(([err]) => fail(`connection error: ${err?.message ?? err}`));
conn.listen();

async function request(type, params, ms = 10000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${type.method} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([conn.sendRequest(type, params), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// The editor's copy of main.go.

let text = TEXT;
let version = 1;

function offsetAt(pos) {
  // utf-16 positions index JavaScript strings; the text is ASCII anyway.
  const lines = text.split("\n");
  let off = 0;
  for (let i = 0; i < pos.line; i++) off += lines[i].length + 1;
  return off + pos.character;
}

// applyEdits applies LSP text edits (ranges against the text before any of them), last first,
// and tells the bridge, as an editor does.
async function applyEdits(edits) {
  const sorted = [...edits].sort((a, b) => offsetAt(b.range.start) - offsetAt(a.range.start));
  const contentChanges = [];
  for (const e of sorted) {
    const s = offsetAt(e.range.start);
    const en = offsetAt(e.range.end);
    text = text.slice(0, s) + e.newText + text.slice(en);
    contentChanges.push({ range: e.range, text: e.newText });
  }
  version++;
  await conn.sendNotification(lsp.DidChangeTextDocumentNotification.type, { textDocument: { uri: URI, version }, contentChanges });
}

function editsOf(workspaceEdit) {
  const out = [...(workspaceEdit?.changes?.[URI] ?? [])];
  for (const dc of workspaceEdit?.documentChanges ?? []) {
    if (dc.textDocument?.uri === URI) out.push(...dc.edits);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The scenario.

async function run() {
  step = "initialize";
  const init = await request(lsp.InitializeRequest.type, {
    processId: process.pid,
    clientInfo: { name: "lsp-prompts-e2e", version: "1" },
    rootUri: ROOT_URI,
    workspaceFolders: [{ uri: ROOT_URI, name: "work" }],
    capabilities: {
      textDocument: {
        synchronization: { dynamicRegistration: false },
        inlineCompletion: { dynamicRegistration: false },
        codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ["", "quickfix", "refactor", "refactor.rewrite"] } } },
      },
      workspace: { workspaceFolders: true, applyEdit: true, workspaceEdit: { documentChanges: true } },
      window: { workDoneProgress: true, showDocument: { support: true } },
    },
  });
  check(init?.capabilities?.inlineCompletionProvider, `no inlineCompletionProvider in ${show(init?.capabilities)}`);
  await conn.sendNotification(lsp.InitializedNotification.type, {});
  await conn.sendNotification(lsp.DidOpenTextDocumentNotification.type, { textDocument: { uri: URI, languageId: "go", version, text } });

  step = "agent ready";
  const readyBy = Date.now() + 10000;
  const said = (re) => fromServer.some((m) => (m.method === "window/logMessage" || m.method === "window/showMessage") && re.test(m.params?.message ?? ""));
  while (!said(/ is ready \(/)) {
    if (Date.now() > readyBy) throw new Error("the bridge never said the agent is ready (window/logMessage within 10 s)");
    await new Promise((r) => setTimeout(r, 25));
  }
  check(said(/Session test agent has no Next Edit Suggestions of its own, so the bridge asks it through prompts/), "the user was not told the agent is asked through prompts");

  step = "automatic inline completion";
  const cursor1 = { line: 3, character: 3 }; // after the first "fo"
  let began = Date.now();
  let result = await request(lsp.InlineCompletionRequest.type, {
    textDocument: { uri: URI },
    position: cursor1,
    context: { triggerKind: lsp.InlineCompletionTriggerKind.Automatic },
  });
  const none = result == null || (Array.isArray(result) ? result : result.items ?? []).length === 0;
  check(none, `an automatic request answered ${show(result)}; want nothing`);
  check(Date.now() - began < 1000, `an automatic request took ${Date.now() - began} ms; want it answered at once`);
  check(agentLog().filter((m) => m.method === "session/prompt").length === 0, "an automatic request was prompted");

  step = "invoked inline completion";
  result = await request(lsp.InlineCompletionRequest.type, {
    textDocument: { uri: URI },
    position: cursor1,
    context: { triggerKind: lsp.InlineCompletionTriggerKind.Invoked },
  });
  const items = Array.isArray(result) ? result : result?.items ?? [];
  if (check(items.length === 1, `an invoked request answered ${show(result)}; want the agent's edit`)) {
    const item = items[0];
    check(typeof item.insertText === "string" && item.range, `item ${show(item)}: want a plain insertText and a range`);
    check(item.range.start.line === 3 && item.range.end.line === 3, `item ${show(item)}: want it on the cursor's line`);
    await applyEdits([{ range: item.range, newText: item.insertText }]);
    check(text.split("\n")[3] === "\tfoo(1)", `after accepting ${show(item)} line 4 reads ${show(text.split("\n")[3])}`);
    check(item.command?.command === "acp-lsp-bridge.accept", `item command ${show(item.command)}; want acp-lsp-bridge.accept`);
    if (item.command) await request(lsp.ExecuteCommandRequest.type, { command: item.command.command, arguments: item.command.arguments });
  }

  step = "code action";
  const cursor2 = { line: TEXT.split("\n").indexOf("\tfo(2)"), character: 3 }; // after the second "fo"
  const actions = await request(lsp.CodeActionRequest.type, {
    textDocument: { uri: URI },
    range: { start: cursor2, end: cursor2 },
    context: { diagnostics: [], triggerKind: lsp.CodeActionTriggerKind.Invoked },
  });
  const withEdit = (actions ?? []).filter((a) => a.edit);
  if (check(withEdit.length === 1, `code actions ${show(actions)}; want one with the agent's edit`)) {
    const a = withEdit[0];
    await applyEdits(editsOf(a.edit));
    if (a.command) await request(lsp.ExecuteCommandRequest.type, { command: a.command.command, arguments: a.command.arguments });
  }
  check(text === WANT, `the text reads ${show(text)}; want ${show(WANT)}`);

  step = "what the agent received";
  const log = agentLog();
  const count = (method) => log.filter((m) => m.method === method).length;
  check(count("session/new") === 1, `${count("session/new")} session/new; want 1`);
  const modes = log.filter((m) => m.method === "session/set_mode");
  check(modes.length === 1 && modes[0].params.modeId === "read-only", `session/set_mode ${show(modes)}; want the read-only mode`);
  check(count("session/prompt") === 2, `${count("session/prompt")} prompts; want 2 (the invoked inline completion, the code action)`);
  check(count("fs/write_text_file") === 0, "the agent was asked to write");
  for (const m of log.filter((m) => m.issue)) fail(`the agent found: ${show(m)}`);
  check(fs.readFileSync(FILE, "utf8") === TEXT, "main.go changed on disk");

  step = "progress";
  const created = fromServer.filter((m) => m.method === "window/workDoneProgress/create").map((m) => m.params.token);
  const progress = fromServer.filter((m) => m.method === "$/progress");
  // The agent's start may show a progress of its own ("starting the agent…"), when it is still
  // starting once the editor has said initialized.
  const begins = progress.filter((m) => m.params.value?.kind === "begin");
  const starting = begins.filter((m) => m.params.value.message === "starting the agent…");
  const asking = begins.filter((m) => m.params.value.message === "asking Session test agent…");
  check(created.length === 2 + starting.length && starting.length <= 1, `${created.length} progress created (${starting.length} for the start); want one per prompt`);
  check(
    asking.length === 2 && begins.length === asking.length + starting.length && begins.every((m) => created.includes(m.params.token)),
    `progress begun ${show(begins)}; want "asking Session test agent…" for each prompt, each of a created token ${show(created)}`,
  );

  step = "shutdown";
  await request(lsp.ShutdownRequest.type, undefined);
  await conn.sendNotification(lsp.ExitNotification.type);
  const exit = await Promise.race([bridgeExited, new Promise((r) => setTimeout(() => r(null), 5000))]);
  check(exit && exit.code === 0, `the bridge ended with ${show(exit)}; want exit code 0`);
  // Every progress ends (the end is sent on the side, after the answer).
  const ends = fromServer.filter((m) => m.method === "$/progress" && m.params.value?.kind === "end");
  check(ends.length === created.length, `progress ended ${ends.length} times; want ${created.length}, every one created`);
}

function finish(code) {
  if (failures.length) {
    console.log(`FAIL (${failures.length}):\n  ` + failures.join("\n  "));
    let log = "";
    try {
      log = fs.readFileSync(BRIDGE_LOG, "utf8");
    } catch {}
    console.log(`bridge stderr:\n${bridgeStderr}\nbridge log:\n${log}\nagent log:\n${fs.existsSync(AGENT_LOG) ? fs.readFileSync(AGENT_LOG, "utf8") : ""}`);
  } else {
    console.log("OK: automatic request not prompted; invoked inline completion and code action edits applied; one read-only session, two prompts, nothing written; progress shown");
  }
  if (!KEEP) fs.rmSync(tmp, { recursive: true, force: true });
  bridge.kill();
  process.exit(code ?? (failures.length ? 1 : 0));
}

const watchdog = setTimeout(() => {
  fail(`no end within ${TIMEOUT_MS} ms`);
  finish(1);
}, TIMEOUT_MS);
run()
  .catch((err) => fail(`${err?.stack ?? err}`))
  .finally(() => {
    clearTimeout(watchdog);
    finish();
  });
