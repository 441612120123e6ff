// lsp-e2e.mjs: drives acp-lsp-bridge end to end as an LSP client (Microsoft's
// vscode-languageserver-protocol + vscode-jsonrpc), with nes-agent.mjs (the official ACP SDK)
// as the agent, then checks what the agent saw against what this editor did.
//
// Usage: node lsp-e2e.mjs --bridge PATH [--encodings utf-16|utf-8,utf-16|none]
//                         [--agent-sync incremental|full] [--agent-encoding utf-8|utf-16|utf-32]
//                         [--agent-via argv|initopts] [--early] [--timeout-ms 18000] [--keep]
// --early: edit right after initialized, without waiting for the agent's NES session (as
// editors do), and wait for it only before the first request; the bridge may then fold the first
// edits into a later didOpen, so the agent's events are checked against the editor's text at the
// version each one carries instead of one for one.
// Needs PEERS_NODE_MODULES. Exits 0 when every check passed, 1 otherwise (with the reasons).
//
// The expected values (positions, ranges, the inline completion item) are computed here from
// the text this client holds, with a position implementation separate from the agent's.

import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import { pathToFileURL, fileURLToPath } from "node:url";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";

// ---------------------------------------------------------------------------------------------
// Options.

const args = process.argv.slice(2);
function opt(name, def) {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = args[i + 1];
  return v === undefined || v.startsWith("--") ? true : v;
}
const BRIDGE = opt("bridge", process.env.LSP_E2E_BRIDGE);
const ENCODINGS_ARG = opt("encodings", "utf-16");
const AGENT_SYNC = opt("agent-sync", "incremental");
const AGENT_ENCODING = opt("agent-encoding", "utf-16");
const AGENT_VIA = opt("agent-via", "argv");
const TIMEOUT_MS = Number(opt("timeout-ms", "18000"));
const KEEP = opt("keep", false) === true;
const EARLY = opt("early", false) === true;
const MODULES = process.env.PEERS_NODE_MODULES;
if (!BRIDGE || !MODULES) {
  console.error("usage: PEERS_NODE_MODULES=... node lsp-e2e.mjs --bridge PATH [options]");
  process.exit(2);
}
const OFFERED = ENCODINGS_ARG === "none" ? null : String(ENCODINGS_ARG).split(",").filter(Boolean);
// The bridge takes the editor's first choice; utf-16 when the editor offers none.
const EDITOR_ENCODING = (OFFERED ?? []).find((e) => ["utf-8", "utf-16", "utf-32"].includes(e)) ?? "utf-16";

const require = createRequire(MODULES.replace(/\/?$/, "/"));
const lsp = require("vscode-languageserver-protocol/node");

const here = path.dirname(fileURLToPath(import.meta.url));
const AGENT_SCRIPT = path.join(here, "nes-agent.mjs");
const scenario = `agent ${AGENT_SYNC}/${AGENT_ENCODING}, editor offers ${OFFERED ? OFFERED.join("+") : "nothing"} (expects ${EDITOR_ENCODING}), agent via ${AGENT_VIA}${EARLY ? ", editing before the agent is ready" : ""}`;

// ---------------------------------------------------------------------------------------------
// Reporting.

const failures = [];
const notes = [];
let step = "start";
function fail(msg) {
  failures.push(`[${step}] ${msg}`);
}
function note(msg) {
  notes.push(`[${step}] ${msg}`);
}
function check(cond, msg) {
  if (!cond) fail(msg);
  return cond;
}
const show = (v) => JSON.stringify(v);

// First difference between two strings, for readable mismatch messages.
function diffText(expected, actual) {
  if (typeof actual !== "string") return `expected text ${show(expected)}, got ${show(actual)}`;
  let i = 0;
  while (i < expected.length && i < actual.length && expected[i] === actual[i]) i++;
  const from = Math.max(0, i - 20);
  return `texts differ at UTF-16 index ${i}: expected …${show(expected.slice(from, i + 25))}…, got …${show(actual.slice(from, i + 25))}… (lengths ${expected.length} vs ${actual.length})`;
}

// ---------------------------------------------------------------------------------------------
// Text and positions on the client side: lines split by a regular expression, columns measured
// on string slices (Buffer.byteLength for utf-8, code points for utf-32, length for utf-16).

function lines(text) {
  const out = [];
  const re = /\r\n|\r|\n/g;
  let start = 0;
  let m;
  while ((m = re.exec(text))) {
    out.push({ start, contentEnd: m.index, end: m.index + m[0].length });
    start = m.index + m[0].length;
  }
  out.push({ start, contentEnd: text.length, end: text.length });
  return out;
}

function measure(s, enc) {
  if (enc === "utf-8") return Buffer.byteLength(s, "utf8");
  if (enc === "utf-32") return Array.from(s).length;
  return s.length;
}

function posFromIndex(text, index, enc) {
  const ls = lines(text);
  let line = ls.findIndex((l) => index >= l.start && index <= l.contentEnd);
  if (line < 0) throw new Error(`index ${index} is inside a line terminator`);
  return { line, character: measure(text.slice(ls[line].start, index), enc) };
}

// Position -> index; throws unless the position is exactly on a character boundary of a line.
function indexFromPos(text, pos, enc) {
  const ls = lines(text);
  if (!Number.isInteger(pos?.line) || !Number.isInteger(pos?.character)) throw new Error(`bad position ${show(pos)}`);
  if (pos.line >= ls.length) throw new Error(`line ${pos.line} past the last line ${ls.length - 1}`);
  const l = ls[pos.line];
  let idx = l.start;
  let units = 0;
  for (const ch of Array.from(text.slice(l.start, l.contentEnd))) {
    if (units >= pos.character) break;
    units += measure(ch, enc);
    idx += ch.length;
  }
  if (units !== pos.character) {
    throw new Error(`${enc} position ${show(pos)} is ${units > pos.character ? "inside a character" : "past the end of the line"}`);
  }
  return idx;
}

// ---------------------------------------------------------------------------------------------
// The editor's documents and what it sent.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lsp-e2e-"));
const root = path.join(tmp, "work space");
fs.mkdirSync(path.join(root, "src"), { recursive: true });
const ROOT_URI = pathToFileURL(root).href;
const AGENT_LOG = path.join(tmp, "agent.jsonl");
const BRIDGE_LOG = path.join(tmp, "bridge.log");

const docs = new Map(); // uri -> {text, version}
const sent = []; // the document events the agent should see, in order
const snapshots = new Map(); // uri -> Map(version -> text)
function snapshot(uri, version, text) {
  if (!snapshots.has(uri)) snapshots.set(uri, new Map());
  snapshots.get(uri).set(version, text);
}
const suggestExpect = []; // per inline request: what the agent's nes/suggest should carry

// ---------------------------------------------------------------------------------------------
// The bridge.

const agentEnv = {
  NES_AGENT_SYNC: AGENT_SYNC,
  NES_AGENT_ENCODING: AGENT_ENCODING,
  NES_AGENT_LOG: AGENT_LOG,
  PEERS_NODE_MODULES: MODULES,
};
const bridgeArgs = ["--log-file", BRIDGE_LOG, "--log-level", "debug"];
if (AGENT_VIA === "argv") bridgeArgs.push("--", process.execPath, AGENT_SCRIPT);
const bridge = spawn(BRIDGE, bridgeArgs, {
  env: AGENT_VIA === "argv" ? { ...process.env, ...agentEnv } : { ...process.env },
  stdio: ["pipe", "pipe", "pipe"],
});
let bridgeStderr = "";
bridge.stderr.on("data", (d) => (bridgeStderr += d.toString()));
let bridgeExit = null;
const bridgeExited = new Promise((resolve) =>
  bridge.on("exit", (code, signal) => {
    bridgeExit = { code, signal };
    resolve(bridgeExit);
  }),
);
bridge.on("error", (err) => {
  fail(`cannot start the bridge: ${err.message}`);
  finish();
});

const conn = lsp.createProtocolConnection(new lsp.StreamMessageReader(bridge.stdout), new lsp.StreamMessageWriter(bridge.stdin));
const fromServer = [];
conn.onRequest((method, params) => {
  fromServer.push({ method, params });
  if (method === "workspace/configuration") return (params?.items ?? []).map(() => null);
  if (method === "workspace/applyEdit") {
    note(`unexpected workspace/applyEdit ${show(params)}`);
    return { applied: false };
  }
  if (!["client/registerCapability", "window/workDoneProgress/create"].includes(method)) {
    note(`server request ${method} ${show(params)}`);
  }
  return null;
});
conn.onNotification((method, params) => {
  fromServer.push({ method, params });
  if (method === "window/showMessage" && params?.type === 1) note(`bridge showMessage error: ${params.message}`);
});
conn.onError(([err]) => note(`connection error: ${err?.message ?? err}`));
conn.listen();

async function request(type, params, ms = 6000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${type.method ?? type} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([conn.sendRequest(type, params), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
const notify = (type, params) => conn.sendNotification(type, params);

// ---------------------------------------------------------------------------------------------
// Editor actions.

function didOpen(uri, text, languageId = "plaintext") {
  docs.set(uri, { text, version: 1 });
  sent.push({ method: "document/didOpen", uri, version: 1, text });
  snapshot(uri, 1, text);
  return notify(lsp.DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId, version: 1, text } });
}

// edits: [{start, end, text}] as string indices, each relative to the text after the
// previous one (LSP's order). Converted to ranges in the editor's encoding here.
function didChange(uri, edits) {
  const doc = docs.get(uri);
  const contentChanges = [];
  for (const e of edits) {
    const range = { start: posFromIndex(doc.text, e.start, EDITOR_ENCODING), end: posFromIndex(doc.text, e.end, EDITOR_ENCODING) };
    contentChanges.push({ range, text: e.text });
    doc.text = doc.text.slice(0, e.start) + e.text + doc.text.slice(e.end);
  }
  doc.version++;
  sent.push({ method: "document/didChange", uri, version: doc.version, text: doc.text, lspChanges: contentChanges.length });
  snapshot(uri, doc.version, doc.text);
  return notify(lsp.DidChangeTextDocumentNotification.type, { textDocument: { uri, version: doc.version }, contentChanges });
}

function didSave(uri) {
  sent.push({ method: "document/didSave", uri, text: docs.get(uri).text });
  return notify(lsp.DidSaveTextDocumentNotification.type, { textDocument: { uri } });
}

function didClose(uri) {
  docs.delete(uri);
  sent.push({ method: "document/didClose", uri, text: null });
  return notify(lsp.DidCloseTextDocumentNotification.type, { textDocument: { uri } });
}

// Index helpers for authoring edits by anchor text.
function at(uri, anchor, offset = 0) {
  const i = docs.get(uri).text.indexOf(anchor);
  if (i < 0) throw new Error(`anchor ${show(anchor)} not in the document`);
  return i + offset;
}

// What the agent's suggestion means for the line holding `cursorIndex`, computed here:
// "ça" -> "ça va" (first one) and "TODO" -> "DONE ✓" (first one), merged into one replacement
// of the span from the first edit's start to the last edit's end.
function expectedItem(text, cursorIndex) {
  const ls = lines(text);
  const l = ls.find((x) => cursorIndex >= x.start && cursorIndex <= x.contentEnd);
  const lineText = text.slice(l.start, l.contentEnd);
  const todo = lineText.indexOf("TODO");
  if (todo < 0) return null;
  const edits = [{ from: todo, to: todo + 4, text: "DONE \u2713" }];
  const ca = lineText.indexOf("\u00e7a");
  if (ca >= 0) edits.push({ from: ca, to: ca + 2, text: "\u00e7a va" });
  edits.sort((a, b) => a.from - b.from);
  const from = edits[0].from;
  const to = edits[edits.length - 1].to;
  let seg = "";
  let k = from;
  for (const e of edits) {
    seg += lineText.slice(k, e.from) + e.text;
    k = e.to;
  }
  seg += lineText.slice(k, to);
  const startIdx = l.start + from;
  const endIdx = l.start + to;
  return {
    insertText: seg,
    range: { start: posFromIndex(text, startIdx, EDITOR_ENCODING), end: posFromIndex(text, endIdx, EDITOR_ENCODING) },
    after: text.slice(0, startIdx) + seg + text.slice(endIdx),
    agentEdits: edits.map((e) => ({
      range: { start: posFromIndex(text, l.start + e.from, AGENT_ENCODING), end: posFromIndex(text, l.start + e.to, AGENT_ENCODING) },
      newText: e.text,
    })),
  };
}

function itemsOf(result) {
  if (result == null) return [];
  if (Array.isArray(result)) return result;
  if (Array.isArray(result.items)) return result.items;
  fail(`inline completion result is neither a list nor an array: ${show(result)}`);
  return [];
}

// Sends textDocument/inlineCompletion with the cursor at `cursorIndex` and checks the answer.
async function inline(uri, cursorIndex, triggerKind, label) {
  const doc = docs.get(uri);
  const position = posFromIndex(doc.text, cursorIndex, EDITOR_ENCODING);
  const expected = expectedItem(doc.text, cursorIndex);
  suggestExpect.push({
    label,
    uri,
    version: doc.version,
    position: posFromIndex(doc.text, cursorIndex, AGENT_ENCODING),
    edits: expected ? expected.agentEdits : null,
  });
  const result = await request(lsp.InlineCompletionRequest.type, {
    textDocument: { uri },
    position,
    context: { triggerKind },
  });
  const items = itemsOf(result);
  if (!expected) {
    check(items.length === 0, `${label}: expected no item (no TODO on the line), got ${show(items)}`);
    return null;
  }
  if (!check(items.length === 1, `${label}: expected exactly one item, got ${items.length}: ${show(result)}`)) return items[0] ?? null;
  const item = items[0];
  const insertText = typeof item.insertText === "string" ? item.insertText : item.insertText?.value;
  check(typeof item.insertText === "string", `${label}: insertText should be a plain string, got ${show(item.insertText)}`);
  check(item.command?.command === "acp-lsp-bridge.accept", `${label}: item command should be acp-lsp-bridge.accept, got ${show(item.command)}`);
  check(Array.isArray(item.command?.arguments) && item.command.arguments.length === 1 && typeof item.command.arguments[0] === "string",
    `${label}: command arguments should be [suggestionId], got ${show(item.command?.arguments)}`);
  if (!check(item.range, `${label}: item has no range`)) return item;
  if (isDeepStrictEqual(item.range, expected.range) && insertText === expected.insertText) return item;
  // Not the canonical merged form: accept an equivalent replacement on the cursor line that
  // contains the cursor, fail otherwise.
  let applied;
  try {
    const s = indexFromPos(doc.text, item.range.start, EDITOR_ENCODING);
    const e = indexFromPos(doc.text, item.range.end, EDITOR_ENCODING);
    applied = doc.text.slice(0, s) + insertText + doc.text.slice(e);
  } catch (err) {
    fail(`${label}: item range ${show(item.range)} is not a valid ${EDITOR_ENCODING} range of the document: ${err.message}; expected range ${show(expected.range)} insertText ${show(expected.insertText)}`);
    return item;
  }
  const sameLine = item.range.start.line === position.line && item.range.end.line === position.line;
  const contains =
    item.range.start.character <= position.character && position.character <= item.range.end.character;
  if (applied === expected.after && sameLine && contains) {
    note(`${label}: item is equivalent but not the merged span: range ${show(item.range)} insertText ${show(insertText)}; merged span is ${show(expected.range)} ${show(expected.insertText)}`);
  } else {
    fail(`${label}: wrong item: range ${show(item.range)} insertText ${show(insertText)}; expected range ${show(expected.range)} insertText ${show(expected.insertText)} (${EDITOR_ENCODING}); ${diffText(expected.after, applied)}`);
  }
  return item;
}

// ---------------------------------------------------------------------------------------------
// The scenario.

const URI_A = pathToFileURL(path.join(root, "src", "main.go")).href;
const URI_B = pathToFileURL(path.join(root, "notes b.md")).href;
const TEXT_A = [
  "package main\n",
  "// \u{10400} astral \u{10400}\u{10400} plane\n",
  "// 日本語のテキスト CJK\r\n",
  "func f() { // \u00e7a marche\n",
  "\t// \u{10400} \u00e7a 日本 TODO: fix \u2713 😀\n",
  "}\n",
  "// end 😀 emoji\n",
].join("");
// Lone \r line endings.
const TEXT_B = "α line\rβ TODO \u00e7a here\r\u{10400} last";

let items = {};

async function run() {
  step = "initialize";
  const capabilities = {
    textDocument: {
      synchronization: { dynamicRegistration: false, didSave: true },
      inlineCompletion: { dynamicRegistration: false },
    },
    workspace: { workspaceFolders: true, executeCommand: { dynamicRegistration: false }, applyEdit: true },
    window: { showDocument: { support: true }, showMessage: {} },
  };
  if (OFFERED) capabilities.general = { positionEncodings: OFFERED };
  const initParams = {
    processId: process.pid,
    clientInfo: { name: "lsp-e2e", version: "1" },
    rootUri: ROOT_URI,
    workspaceFolders: [{ uri: ROOT_URI, name: "work space" }],
    capabilities,
  };
  if (AGENT_VIA === "initopts") {
    initParams.initializationOptions = { agent: { command: process.execPath, args: [AGENT_SCRIPT], env: agentEnv } };
  }
  const init = await request(lsp.InitializeRequest.type, initParams, 10000);
  const caps = init?.capabilities ?? {};
  const negotiated = caps.positionEncoding ?? "utf-16";
  check(negotiated === EDITOR_ENCODING, `positionEncoding: expected ${EDITOR_ENCODING} for offered ${show(OFFERED)}, got ${show(caps.positionEncoding)}`);
  const sync = caps.textDocumentSync;
  check(sync && typeof sync === "object" && sync.openClose === true && sync.change === 2 && sync.save,
    `textDocumentSync: expected {openClose:true, change:2, save:{}}, got ${show(sync)}`);
  check(caps.inlineCompletionProvider, `no inlineCompletionProvider in ${show(caps)}`);
  check(caps.executeCommandProvider?.commands?.includes("acp-lsp-bridge.accept"),
    `executeCommandProvider should list acp-lsp-bridge.accept, got ${show(caps.executeCommandProvider)}`);
  await notify(lsp.InitializedNotification.type, {});

  // The bridge starts the agent in the background, folds edits made before the agent is ready
  // into the didOpen it sends then, and answers requests before then with nothing. Unless
  // --early, wait for the bridge to say the agent is ready (window/logMessage) so that every edit
  // below reaches the agent as its own event; with --early, wait before the first request. (The
  // agent logging nes/start is not enough: the bridge is ready only once it has read the answer.)
  const isReady = () => fromServer.some((m) => m.method === "window/logMessage" && / is ready \(/.test(m.params?.message ?? ""));
  const agentReady = async () => {
    step = "agent ready";
    const readyBy = Date.now() + 10000;
    while (!isReady()) {
      if (Date.now() > readyBy) throw new Error("the bridge never said the agent is ready (window/logMessage within 10 s)");
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  if (!EARLY) await agentReady();

  step = "document A";
  const A = URI_A;
  await didOpen(A, TEXT_A, "go");
  // v2: insertion on an astral-plane line.
  await didChange(A, [{ start: at(A, "astral"), end: at(A, "astral"), text: "Ω " }]);
  // v3: deletion on the CJK line (a \r\n line).
  await didChange(A, [{ start: at(A, "語の"), end: at(A, "語の", 2), text: "" }]);
  // v4: three changes in one notification, each on the text after the previous one:
  // replace an emoji near the end, insert after "ça" earlier, split a line between two
  // astral characters.
  {
    const t = docs.get(A).text;
    const emoji = t.indexOf("end 😀") + 4;
    const ca = t.indexOf("\u00e7a marche") + 2;
    const split = t.indexOf("\u{10400}\u{10400}") + 2;
    await didChange(A, [
      { start: emoji, end: emoji + 2, text: "🎉🎉" },
      { start: ca, end: ca, text: "é" },
      { start: split, end: split, text: "\n" },
    ]);
  }
  // v5: delete the whole CJK line with its \r\n.
  {
    const t = docs.get(A).text;
    const ls = lines(t);
    const n = ls.findIndex((l) => t.slice(l.start, l.contentEnd).includes("日本"));
    await didChange(A, [{ start: ls[n].start, end: ls[n + 1].start, text: "" }]);
  }
  // v6: insert a new \r\n line with an astral character at the top.
  {
    const start = lines(docs.get(A).text)[1].start;
    await didChange(A, [{ start, end: start, text: "// new \u{10400} line\r\n" }]);
  }
  // v7: a replacement across two lines, ending after an astral character.
  await didChange(A, [{ start: at(A, "astral"), end: at(A, "\u{10400} plane", 2), text: "ASTRAL\n\u{10400}Y" }]);
  // v8: delete an astral character at the end of the TODO line.
  await didChange(A, [{ start: at(A, "\u2713 😀", 1), end: at(A, "\u2713 😀", 4), text: "" }]);
  await didSave(A);
  if (EARLY) await agentReady();

  step = "inline 1";
  const todoCursor = () => at(A, "TODO", 2);
  items.first = await inline(A, todoCursor(), 2 /* Automatic */, "inline 1");
  step = "inline 2";
  items.second = await inline(A, todoCursor(), 1 /* Invoked */, "inline 2");

  step = "accept";
  if (items.second?.command) {
    const res = await request(lsp.ExecuteCommandRequest.type, {
      command: items.second.command.command,
      arguments: items.second.command.arguments,
    });
    if (res != null) note(`executeCommand answered ${show(res)}`);
    // The editor applies the accepted item and reports the edit.
    const doc = docs.get(A);
    try {
      const s = indexFromPos(doc.text, items.second.range.start, EDITOR_ENCODING);
      const e = indexFromPos(doc.text, items.second.range.end, EDITOR_ENCODING);
      await didChange(A, [{ start: s, end: e, text: items.second.insertText }]);
    } catch (err) {
      fail(`cannot apply the accepted item: ${err.message}`);
    }
  } else {
    fail("no item to accept");
  }

  step = "inline 3";
  const ls = lines(docs.get(A).text);
  const doneLine = ls.find((l) => docs.get(A).text.slice(l.start, l.contentEnd).includes("DONE"));
  if (check(doneLine, "the accepted text is not in the document")) {
    await inline(A, doneLine.start + 1, 1, "inline 3 (no TODO left)");
  }

  step = "document B (\\r line endings)";
  const B = URI_B;
  await didOpen(B, TEXT_B, "markdown");
  {
    const t = docs.get(B).text;
    const third = lines(t)[2].start;
    const here = t.indexOf("here");
    // Two changes: the later one first, so the second range is unaffected.
    await didChange(B, [
      { start: third, end: third, text: "¡" },
      { start: here, end: here + 4, text: "there 日本" },
    ]);
  }
  items.b = await inline(B, at(B, "TODO", 4), 1, "inline B");
  await didClose(B);

  step = "close";
  await didClose(A);
  step = "shutdown";
  await request(lsp.ShutdownRequest.type, undefined, 8000);
  await notify(lsp.ExitNotification.type);
  step = "bridge exit";
  const exited = await Promise.race([bridgeExited, new Promise((r) => setTimeout(() => r(null), 5000))]);
  if (!exited) fail("the bridge did not exit within 5 s of exit");
  else check(exited.code === 0, `the bridge exited with ${show(exited)} after shutdown+exit, expected code 0`);
}

// ---------------------------------------------------------------------------------------------
// The agent's side of the story.

function readAgentLog() {
  if (!fs.existsSync(AGENT_LOG)) return [];
  return fs
    .readFileSync(AGENT_LOG, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const sameUri = (a, b) => a === b || (typeof a === "string" && decodeURIComponent(a) === decodeURIComponent(b));

async function checkAgent() {
  step = "agent log";
  // The agent may still be draining stdin when the bridge exits: wait for its last event.
  const deadline = Date.now() + 3000;
  let log = readAgentLog();
  const closes = sent.filter((e) => e.method === "document/didClose").length;
  while (
    Date.now() < deadline &&
    log.filter((e) => e.method === "document/didClose").length < closes &&
    !log.some((e) => e.event === "exit")
  ) {
    await new Promise((r) => setTimeout(r, 100));
    log = readAgentLog();
  }
  if (!check(log.length > 0, `the agent log ${AGENT_LOG} is empty: the agent never started`)) return;

  for (const e of log.filter((e) => e.issue)) fail(`agent found: ${e.issue} ${show({ ...e, t: undefined, issue: undefined })}`);
  for (const e of log.filter((e) => e.sdkError)) fail(`ACP SDK error: ${show(e.sdkError)}`);

  const msgs = log.filter((e) => e.seq !== undefined).sort((a, b) => a.seq - b.seq);
  const byMethod = (m) => msgs.filter((e) => e.method === m);

  step = "agent: initialize";
  const init = byMethod("initialize");
  if (check(init.length === 1, `expected one initialize, got ${init.length}`)) {
    const raw = init[0].raw ?? {};
    check(raw.protocolVersion === 1, `initialize protocolVersion: expected 1, got ${show(raw.protocolVersion)}`);
    check(isDeepStrictEqual(raw.clientCapabilities?.positionEncodings, ["utf-8", "utf-32", "utf-16"]),
      `initialize clientCapabilities.positionEncodings: expected ["utf-8","utf-32","utf-16"], got ${show(raw.clientCapabilities?.positionEncodings)}`);
  }

  step = "agent: nes/start";
  const start = byMethod("nes/start");
  if (check(start.length === 1, `expected one nes/start, got ${start.length}`)) {
    const raw = start[0].raw ?? {};
    check(sameUri(raw.workspaceUri, ROOT_URI), `nes/start workspaceUri: expected ${ROOT_URI}, got ${show(raw.workspaceUri)}`);
    const wf = raw.workspaceFolders;
    check(Array.isArray(wf) && wf.length === 1 && sameUri(wf[0].uri, ROOT_URI) && wf[0].name === "work space",
      `nes/start workspaceFolders: expected [{uri:${ROOT_URI}, name:"work space"}], got ${show(wf)}`);
    if (init.length === 1) check(start[0].seq > init[0].seq, "nes/start arrived before initialize");
  }
  const sessionId = start[0]?.result?.sessionId;

  step = "agent: document events";
  const events = msgs.filter((e) => e.method?.startsWith("document/"));
  if (EARLY) checkEventsByVersion(events, sessionId);
  else checkEventsOneForOne(events, sessionId);

  step = "agent: nes/suggest";
  checkSuggestAndLifecycle(log, byMethod, sessionId);

  step = "agent process";
  const pid = log.find((e) => e.event === "start")?.pid;
  if (pid) {
    let alive = true;
    for (let i = 0; i < 20 && alive; i++) {
      try {
        process.kill(pid, 0);
        await new Promise((r) => setTimeout(r, 100));
      } catch {
        alive = false;
      }
    }
    if (alive) {
      fail(`the agent (pid ${pid}) is still running 2 s after the bridge exited`);
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  }
}

function checkFullSync(where, got, text) {
  const changes = got.raw?.contentChanges ?? [];
  check(changes.length === 1 && changes[0].range == null && changes[0].text === text,
    `${where}: full sync: expected one change without range carrying the whole text, got ${show(changes)}`);
}

// Each event the editor sent reaches the agent as its own event, in order, and the agent's
// mirror after it equals the editor's text.
function checkEventsOneForOne(events, sessionId) {
  const n = Math.max(events.length, sent.length);
  for (let i = 0; i < n; i++) {
    const exp = sent[i];
    const got = events[i];
    const where = `event ${i + 1}`;
    if (!exp) {
      fail(`${where}: unexpected extra ${got.method} ${show(got.raw)}`);
      continue;
    }
    if (!got) {
      fail(`${where}: the agent never got ${exp.method} (version ${exp.version ?? "-"}) for ${exp.uri}`);
      continue;
    }
    if (!check(got.method === exp.method, `${where}: expected ${exp.method}, got ${got.method} ${show(got.raw)} (events out of order or missing)`)) continue;
    check(sameUri(got.params.uri, exp.uri), `${where} ${exp.method}: uri ${show(got.params.uri)}, expected ${exp.uri}`);
    if (got.params.uri !== exp.uri && sameUri(got.params.uri, exp.uri)) note(`${where}: uri spelled ${got.params.uri}, editor sent ${exp.uri}`);
    check(got.params.sessionId === sessionId, `${where} ${exp.method}: sessionId ${show(got.params.sessionId)}, expected ${show(sessionId)}`);
    if (exp.version !== undefined) {
      check(got.params.version === exp.version, `${where} ${exp.method}: version ${got.params.version}, expected ${exp.version}`);
    }
    if (exp.text === null) {
      check(got.mirror === null, `${where} ${exp.method}: the document is still open in the agent`);
    } else if (got.mirror !== exp.text) {
      fail(`${where} ${exp.method} v${exp.version ?? ""}: agent mirror differs from the editor's text: ${diffText(exp.text, got.mirror)}; the agent received ${show(got.raw)}`);
    }
    if (exp.method === "document/didChange") {
      const changes = got.raw?.contentChanges ?? [];
      if (AGENT_SYNC === "full") {
        checkFullSync(where, got, exp.text);
      } else {
        check(changes.length > 0 && changes.every((c) => c.range != null),
          `${where}: incremental sync: expected ranged changes, got ${show(changes)}`);
        if (changes.length !== exp.lspChanges) note(`${where}: ${exp.lspChanges} LSP change(s) became ${changes.length} ACP change(s)`);
      }
    }
  }
}

// --early: edits made before the agent was ready may be folded together, so each event is
// checked against the editor's text at the version it carries: versions only grow, every
// mirror equals the editor's text at that version, and each document reaches its last
// version before it is closed.
function checkEventsByVersion(events, sessionId) {
  note(`the agent got ${events.length} document events for the editor's ${sent.length}: ${events.map((e) => `${e.method.slice(9)}${e.params.version ?? ""}`).join(" ")}`);
  const state = new Map(); // editor uri -> {open, version, closedAt}
  for (const got of events) {
    const where = `agent seq ${got.seq} ${got.method}`;
    const uri = [...snapshots.keys()].find((u) => sameUri(u, got.params.uri));
    if (!check(uri, `${where}: unknown document ${show(got.params.uri)}`)) continue;
    check(got.params.sessionId === sessionId, `${where}: sessionId ${show(got.params.sessionId)}, expected ${show(sessionId)}`);
    const st = state.get(uri) ?? { open: false, version: 0, closedAt: null };
    state.set(uri, st);
    const texts = snapshots.get(uri);
    switch (got.method) {
      case "document/didOpen":
      case "document/didChange": {
        const v = got.params.version;
        if (got.method === "document/didOpen") check(!st.open, `${where}: ${uri} opened twice`);
        else check(st.open, `${where}: change of ${uri} which the agent does not have open`);
        check(v > st.version, `${where}: version ${v} after version ${st.version}`);
        st.open = true;
        st.version = v;
        if (!check(texts.has(v), `${where}: the editor never had version ${v} of ${uri}`)) break;
        if (got.mirror !== texts.get(v)) {
          fail(`${where} v${v}: agent mirror differs from the editor's text: ${diffText(texts.get(v), got.mirror)}; the agent received ${show(got.raw)}`);
        }
        if (got.method === "document/didChange" && AGENT_SYNC === "full") checkFullSync(where, got, texts.get(v));
        break;
      }
      case "document/didSave":
        check(st.open, `${where}: save of ${uri} which the agent does not have open`);
        check(got.mirror === texts.get(st.version), `${where}: agent mirror changed on save`);
        break;
      case "document/didClose":
        check(st.open, `${where}: close of ${uri} which the agent does not have open`);
        st.open = false;
        st.closedAt = st.version;
        check(got.mirror === null, `${where}: the document is still open in the agent`);
        break;
    }
  }
  for (const [uri, texts] of snapshots) {
    const last = Math.max(...texts.keys());
    const st = state.get(uri);
    check(st && st.closedAt === last,
      `${uri}: the agent should have reached version ${last} and then closed it; it ${st ? `closed it at version ${st.closedAt}` : "never saw it"}`);
  }
}

// nes/suggest carries the editor's request in the agent's encoding; the suggestion ids come
// back in the items; accept and reject follow the lifecycle.
function checkSuggestAndLifecycle(log, byMethod, sessionId) {
  const suggests = byMethod("nes/suggest");
  check(suggests.length === suggestExpect.length, `expected ${suggestExpect.length} nes/suggest, got ${suggests.length}`);
  suggestExpect.forEach((exp, i) => {
    const got = suggests[i];
    if (!got) return;
    const p = got.params;
    check(sameUri(p.uri, exp.uri), `${exp.label}: nes/suggest uri ${show(p.uri)}, expected ${exp.uri}`);
    check(p.sessionId === sessionId, `${exp.label}: nes/suggest sessionId ${show(p.sessionId)}, expected ${show(sessionId)}`);
    check(p.version === exp.version, `${exp.label}: nes/suggest version ${p.version}, expected ${exp.version}`);
    check(isDeepStrictEqual({ line: p.position?.line, character: p.position?.character }, exp.position),
      `${exp.label}: nes/suggest position ${show(p.position)}, expected ${show(exp.position)} (${AGENT_ENCODING})`);
    const sugg = got.result?.suggestions ?? [];
    if (exp.edits) {
      check(sugg.length === 1 && isDeepStrictEqual(sugg[0].edits, exp.edits),
        `${exp.label}: the agent suggested ${show(sugg)}, expected edits ${show(exp.edits)} (agent mirror and editor disagree)`);
    } else {
      check(sugg.length === 0, `${exp.label}: the agent suggested ${show(sugg)}, expected nothing`);
    }
  });
  const idOf = (i) => suggests[i]?.result?.suggestions?.[0]?.id;
  const [id1, id2] = [idOf(0), idOf(1)];
  if (items.first) check(items.first.command?.arguments?.[0] === id1, `inline 1: command argument ${show(items.first.command?.arguments)}, agent's suggestion id ${show(id1)}`);
  if (items.second) check(items.second.command?.arguments?.[0] === id2, `inline 2: command argument ${show(items.second.command?.arguments)}, agent's suggestion id ${show(id2)}`);

  step = "agent: accept/reject";
  const accepts = byMethod("nes/accept");
  const rejects = byMethod("nes/reject");
  check(accepts.length === 1 && accepts[0].params.id === id2,
    `expected one nes/accept for ${show(id2)}, got ${show(accepts.map((a) => a.raw))}`);
  for (const a of accepts) check(a.params.sessionId === sessionId, `nes/accept sessionId ${show(a.params.sessionId)}, expected ${show(sessionId)}`);
  const r1 = rejects.filter((r) => r.params.id === id1);
  check(r1.length === 1 && r1[0].params.reason === "replaced",
    `expected nes/reject {id:${show(id1)}, reason:"replaced"} once after the second inline request, got ${show(r1.map((r) => r.raw))}`);
  check(!rejects.some((r) => r.params.id === id2), `accepted suggestion ${id2} was also rejected: ${show(rejects.map((r) => r.raw))}`);
  const seen = new Set();
  for (const r of rejects) {
    check(!seen.has(r.params.id), `suggestion ${r.params.id} rejected twice`);
    seen.add(r.params.id);
    check(r.params.sessionId === sessionId, `nes/reject sessionId ${show(r.params.sessionId)}, expected ${show(sessionId)}`);
  }
  if (accepts[0] && suggests[1]) check(accepts[0].seq > suggests[1].seq, "nes/accept arrived before the suggestion it accepts");
  const others = rejects.filter((r) => r.params.id !== id1).map((r) => `${r.params.id}:${r.params.reason}`);
  if (others.length) note(`other rejects: ${others.join(", ")}`);
  const unknown = log.filter((e) => e.kind === "wire").map((e) => e.method);
  if (unknown.length) note(`notifications without an NES handler: ${unknown.join(", ")}`);
  if (byMethod("nes/close").length) note("the bridge sent nes/close");
}

// ---------------------------------------------------------------------------------------------

let finished = false;
function tail(text, n) {
  return text.split("\n").slice(-n).join("\n");
}
function finish() {
  if (finished) return;
  finished = true;
  if (bridgeExit === null) bridge.kill("SIGKILL");
  const ok = failures.length === 0;
  console.log(`lsp-e2e: ${scenario}`);
  for (const n of notes) console.log(`  note: ${n}`);
  if (ok) {
    console.log(`lsp-e2e: PASS (${sent.length} document events, ${suggestExpect.length} inline requests)`);
  } else {
    console.log(`lsp-e2e: FAIL (${failures.length})`);
    for (const f of failures) console.log(`  FAIL ${f}`);
    console.log(`  agent log: ${AGENT_LOG}`);
    console.log(`  bridge log: ${BRIDGE_LOG}`);
    if (bridgeStderr.trim()) console.log(`--- bridge stderr (tail) ---\n${tail(bridgeStderr, 30)}`);
    if (fs.existsSync(BRIDGE_LOG)) console.log(`--- bridge log (tail) ---\n${tail(fs.readFileSync(BRIDGE_LOG, "utf8"), 40)}`);
    const srv = fromServer.filter((m) => m.method !== "$/progress");
    if (srv.length) console.log(`--- from the bridge to the editor ---\n${srv.map((m) => `${m.method} ${show(m.params)}`).join("\n")}`);
  }
  if (ok && !KEEP) fs.rmSync(tmp, { recursive: true, force: true });
  else console.log(`  kept ${tmp}`);
  process.exit(ok ? 0 : 1);
}

const watchdog = setTimeout(() => {
  fail(`timed out after ${TIMEOUT_MS} ms`);
  finish();
}, TIMEOUT_MS);

try {
  await run();
} catch (err) {
  fail(`stopped: ${err?.stack ?? err}`);
}
if (bridgeExit === null) {
  // run() stopped early: end the bridge so that the agent ends too, then look at its log.
  bridge.stdin.end();
  await Promise.race([bridgeExited, new Promise((r) => setTimeout(r, 2000))]);
  if (bridgeExit === null) bridge.kill("SIGKILL");
}
try {
  await checkAgent();
} catch (err) {
  fail(`checking the agent log: ${err?.stack ?? err}`);
}
clearTimeout(watchdog);
finish();
