// lsp-kinds-e2e.mjs: drives acp-lsp-bridge end to end as an LSP client (Microsoft's
// vscode-languageserver-protocol + vscode-jsonrpc) with nes-agent.mjs in kinds mode
// (NES_AGENT_KINDS=1, the official ACP SDK) as the agent, and checks every editor surface for
// every suggestion kind: edit (this file, another file), jump, rename, searchAndReplace (a file,
// a folder, targets outside the workspace), and several kinds at once.
//
// Usage: node lsp-kinds-e2e.mjs --bridge PATH [--encodings utf-16|utf-8] [--agent-encoding utf-8|utf-16|utf-32]
//                               [--document-changes on|off] [--timeout-ms 60000] [--keep]
// Needs PEERS_NODE_MODULES. Exits 0 when every check passed, 1 otherwise (with the reasons).
//
// The editor does not advertise textDocument.inlineCompletion (so the bridge offers
// textDocument/completion), advertises workspace.applyEdit, window.showDocument, code action
// literals, and workspace.workspaceEdit.documentChanges when --document-changes on.
//
// For each marker (EDIT, OTHER, JUMP, RENAME, SAR, SARDIR, OUTSIDE, MIX; see nes-agent.mjs) the
// editor types a fresh line holding the marker, puts the cursor at its end, and goes through:
//   code action   titles, kinds, commands; each action's WorkspaceEdit applied to a copy of the
//                 texts (the editor's for open documents, the disk's for the others) must give
//                 the texts computed here from the marker's rule; then one action is applied for
//                 real (documents through didChange, other files on disk) and its command run, in
//                 the order LSP prescribes (edit first): nes/accept, window/showDocument for a
//                 jump, an edit of another file or a cursorPosition, nothing otherwise
//   completion    one item per edit suggestion of the document: textEdit on the cursor line
//                 containing the cursor, plus additionalTextEdits, must give the suggested text;
//                 applied, then its command: nes/accept
//   inline edit   textDocument/copilotInlineEdit: one merged edit, textDocument echoed; a stale
//                 version gets no edit; applied, then its command: nes/accept
//   reject        acp-lsp-bridge.reject with [id], [{uri}] or no argument: nes/reject "rejected"
//   suggest       acp-lsp-bridge.suggest [{uri, position}]: nes/suggest "manual",
//                 window/showDocument, window/showMessageRequest answered "Apply"
//                 (workspace/applyEdit with the suggested texts, then nes/accept) or "Dismiss"
//                 (nes/reject "rejected")
// OUTSIDE must never become an action (each such suggestion gets a nes/reject). At the end,
// every suggestion id the agent made must have ended exactly once, the way this editor ended
// it; the agent's mirror must equal the editor's text at every version; the agent reports any
// message that failed the SDK's validation.
//
// Every expected value (positions in the editor's and the agent's encodings, the texts after
// each suggestion, the match counts) is computed here from the texts this client holds, with
// its own implementation of positions, identifiers and search.

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
const OFFERED = String(opt("encodings", "utf-16")).split(",").filter(Boolean);
const AGENT_ENCODING = opt("agent-encoding", "utf-16");
const DOC_CHANGES = opt("document-changes", "off") === "on";
const TIMEOUT_MS = Number(opt("timeout-ms", "60000"));
const KEEP = opt("keep", false) === true;
const MODULES = process.env.PEERS_NODE_MODULES;
if (!BRIDGE || !MODULES) {
  console.error("usage: PEERS_NODE_MODULES=... node lsp-kinds-e2e.mjs --bridge PATH [options]");
  process.exit(2);
}
// The bridge takes the editor's first choice; utf-16 when the editor offers none.
const ENC = OFFERED.find((e) => ["utf-8", "utf-16", "utf-32"].includes(e)) ?? "utf-16";

const require = createRequire(MODULES.replace(/\/?$/, "/"));
const lsp = require("vscode-languageserver-protocol/node");

const here = path.dirname(fileURLToPath(import.meta.url));
const AGENT_SCRIPT = path.join(here, "nes-agent.mjs");
const scenario = `kinds: editor offers ${OFFERED.join("+")} (expects ${ENC}), agent ${AGENT_ENCODING}, ${DOC_CHANGES ? "documentChanges" : "changes"}`;

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
// A note that recurs: kept once per category, with how many times it came up.
const recurring = new Map(); // category -> {msg, n}
function noteOnce(category, msg) {
  const r = recurring.get(category);
  if (r) r.n++;
  else recurring.set(category, { msg: `[${step}] ${msg}`, n: 1 });
}
function check(cond, msg) {
  if (!cond) fail(msg);
  return cond;
}
const show = (v) => JSON.stringify(v);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function diffText(expected, actual) {
  if (typeof actual !== "string") return `expected text ${show(expected)}, got ${show(actual)}`;
  let i = 0;
  while (i < expected.length && i < actual.length && expected[i] === actual[i]) i++;
  const from = Math.max(0, i - 25);
  return `texts differ at UTF-16 index ${i}: expected …${show(expected.slice(from, i + 30))}…, got …${show(actual.slice(from, i + 30))}… (lengths ${expected.length} vs ${actual.length})`;
}

// ---------------------------------------------------------------------------------------------
// Text and positions: lines split by a regular expression, columns measured on string slices
// (Buffer.byteLength for utf-8, code points for utf-32, length for utf-16).

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

function posFromIndex(text, index, enc = ENC) {
  const ls = lines(text);
  const line = ls.findIndex((l) => index >= l.start && index <= l.contentEnd);
  if (line < 0) throw new Error(`index ${index} is inside a line terminator`);
  return { line, character: measure(text.slice(ls[line].start, index), enc) };
}

// Position -> index; throws unless the position is exactly on a character boundary of a line.
function indexFromPos(text, pos, enc = ENC) {
  const ls = lines(text);
  if (!Number.isInteger(pos?.line) || !Number.isInteger(pos?.character) || pos.line < 0 || pos.character < 0) {
    throw new Error(`bad position ${show(pos)}`);
  }
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

const rangeOf = (text, s, e, enc = ENC) => ({ start: posFromIndex(text, s, enc), end: posFromIndex(text, e, enc) });
const plainPos = (p) => ({ line: p?.line, character: p?.character });
const plainRange = (r) => ({ start: plainPos(r?.start), end: plainPos(r?.end) });

// Index edits {s, e, t} all relative to the same text: applied from the last to the first.
function applyIdx(text, edits) {
  const sorted = [...edits].sort((a, b) => a.s - b.s || a.e - b.e);
  for (let k = 1; k < sorted.length; k++) {
    if (sorted[k].s < sorted[k - 1].e) throw new Error(`overlapping edits ${show(sorted[k - 1])} and ${show(sorted[k])}`);
  }
  let out = text;
  for (let k = sorted.length - 1; k >= 0; k--) out = out.slice(0, sorted[k].s) + sorted[k].t + out.slice(sorted[k].e);
  return out;
}

// LSP TextEdits (ranges in the editor's encoding, all relative to `text`) -> index edits.
function toIdx(text, edits, what) {
  if (!Array.isArray(edits)) throw new Error(`${what}: edits ${show(edits)} is not an array`);
  return edits.map((e, k) => {
    if (typeof e?.newText !== "string") throw new Error(`${what}: edit ${k} has no newText: ${show(e)}`);
    let s, en;
    try {
      s = indexFromPos(text, e.range?.start);
      en = indexFromPos(text, e.range?.end);
    } catch (err) {
      throw new Error(`${what}: edit ${k} range ${show(e.range)} is not a valid ${ENC} range: ${err.message}`);
    }
    if (en < s) throw new Error(`${what}: edit ${k} range ${show(e.range)} is reversed`);
    return { s, e: en, t: e.newText };
  });
}

// ---------------------------------------------------------------------------------------------
// The workspace.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lsp-kinds-"));
const wsParent = path.join(tmp, "ws");
const root = path.join(wsParent, "work space");
const logDir = path.join(tmp, "logs");
fs.mkdirSync(logDir, { recursive: true });
const ROOT_URI = pathToFileURL(root).href;
const AGENT_LOG = path.join(logDir, "agent.jsonl");
const BRIDGE_LOG = path.join(logDir, "bridge.log");

const file = (rel) => path.join(root, rel);
const uriOf = (rel) => pathToFileURL(file(rel)).href;
function write(p, content) {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

const TEXT_MAIN = [
  "package main\n",
  "\n",
  "// \u{10400} astral \u{1F600} count(count) count.x \"count\" countMax count\u{1F600} _count count2\n",
  "func main() {\n",
  "\t\u00e7a := \"(\u00e7a)+ (\u00e7a)(\u00e7a)+\" // tmp_1 日本tmp_22 tmp_x\n",
  "\t_ = \u00e7a\n",
  "}\n",
].join("");
const BIG = "tmp_15\n" + ("y".repeat(99) + "\n").repeat(15000); // 1.5 MB: skipped by a folder search
const OUTSIDE_FILES = [path.join(wsParent, "outside.txt"), path.join(wsParent, "work space2", "outside.txt")];
write(file("src/main.go"), TEXT_MAIN);
write(file("src/util.go"), "package main\n\n// \u{10400} util 日本 \u{1F600} ping tmp_5 secret\nfunc ping() {}\n");
write(file("src/open.go"), "package main\n\n// \u{10400} open \u00e7a\n");
write(file("docs/notes \u00e9.txt"), "notes \u{1F600} tmp_9\r\nsecond tmp_10 line\n日本 tmp_11");
write(file("src/deep/x.md"), "# \u{10400} tmp_12\n");
write(file(".git/config"), "[core]\n\tx = tmp_13\n");
write(file("bin/blob.dat"), Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from("tmp_14"), Buffer.from([0, 255])]));
write(file("big.log"), BIG);
write(file("empty.txt"), "");
for (const p of OUTSIDE_FILES) write(p, "secret tmp_77\n");
// Links inside the workspace that point out of it: a folder search skips them, and a suggestion
// that names the file link is refused.
fs.symlinkSync(path.join("..", "outside.txt"), file("leak.txt"));
fs.symlinkSync("..", file("loop"));
const untouchable = new Map([...OUTSIDE_FILES, file(".git/config"), file("bin/blob.dat"), file("big.log")].map((p) => [p, fs.readFileSync(p)]));

const MAIN = uriOf("src/main.go");
const UTIL = uriOf("src/util.go");
const OPEN = uriOf("src/open.go");
const OUTSIDE_OPEN = pathToFileURL(OUTSIDE_FILES[0]).href;

// A uri's identity: its file path (the bridge may spell a uri differently from the editor).
function keyOf(uri) {
  try {
    return path.resolve(fileURLToPath(uri));
  } catch {
    return `(not a file uri) ${uri}`;
  }
}
const sameKey = (a, b) => keyOf(a) === keyOf(b);

// ---------------------------------------------------------------------------------------------
// The editor's documents.

const docs = new Map(); // uri -> {text, version}
const snapshots = new Map(); // key -> Map(version -> text)
function snapshot(uri, version, text) {
  const k = keyOf(uri);
  if (!snapshots.has(k)) snapshots.set(k, new Map());
  snapshots.get(k).set(version, text);
}
function openDoc(key) {
  for (const [uri, d] of docs) if (keyOf(uri) === key) return { uri, ...d };
  return null;
}
// The text the editor would edit: the open document's, else the file's on disk (null: none).
function textOfKey(key) {
  const d = openDoc(key);
  if (d) return d.text;
  try {
    return fs.readFileSync(key, "utf8");
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The bridge.

const agentEnv = {
  NES_AGENT_KINDS: "1",
  NES_AGENT_SYNC: "incremental",
  NES_AGENT_ENCODING: AGENT_ENCODING,
  NES_AGENT_LOG: AGENT_LOG,
  PEERS_NODE_MODULES: MODULES,
};
const bridge = spawn(BRIDGE, ["--log-file", BRIDGE_LOG, "--log-level", "debug", "--", process.execPath, AGENT_SCRIPT], {
  env: { ...process.env, ...agentEnv },
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
const fromServer = []; // {method, params, answer?}
let choice = null; // the editor's answer to window/showMessageRequest ("hold": wait for `held`)
let held = null;
conn.onRequest(async (method, params) => {
  const rec = { method, params };
  fromServer.push(rec);
  switch (method) {
    case "workspace/configuration":
      return (params?.items ?? []).map(() => null);
    case "window/showDocument":
      return { success: true };
    case "window/showMessageRequest": {
      if (choice === "hold") await held;
      if (!choice) {
        note(`window/showMessageRequest nobody expected: ${show(params)}`);
        return null;
      }
      const item = (params?.actions ?? []).find((a) => a?.title === choice);
      if (!item) {
        fail(`window/showMessageRequest offers ${show(params?.actions)}, no ${show(choice)}`);
        return null;
      }
      rec.answer = item;
      return item;
    }
    case "workspace/applyEdit":
      return applyEditRequest(rec);
    case "client/registerCapability":
    case "window/workDoneProgress/create":
      return null;
    default:
      note(`server request ${method} ${show(params)}`);
      return null;
  }
});
conn.onNotification((method, params) => {
  fromServer.push({ method, params });
  if (method === "window/showMessage" && params?.type === 1) note(`bridge showMessage error: ${params.message}`);
});
conn.onError(([err]) => note(`connection error: ${err?.message ?? err}`));
conn.listen();

async function request(method, params, ms = 8000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${method} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([conn.sendRequest(method, params), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
const notify = (method, params) => conn.sendNotification(method, params);

function didOpen(uri, text, languageId) {
  docs.set(uri, { text, version: 1 });
  snapshot(uri, 1, text);
  return notify("textDocument/didOpen", { textDocument: { uri, languageId, version: 1, text } });
}

// edits: [{s, e, t}] as string indices, each relative to the text after the previous one.
function didChange(uri, edits) {
  const doc = docs.get(uri);
  const contentChanges = [];
  for (const x of edits) {
    contentChanges.push({ range: rangeOf(doc.text, x.s, x.e), text: x.t });
    doc.text = doc.text.slice(0, x.s) + x.t + doc.text.slice(x.e);
  }
  doc.version++;
  snapshot(uri, doc.version, doc.text);
  return notify("textDocument/didChange", { textDocument: { uri, version: doc.version }, contentChanges });
}

// ---------------------------------------------------------------------------------------------
// The agent's log, read as it grows.

const agentLog = [];
let logOffset = 0;
let logRest = Buffer.alloc(0); // bytes after the last newline read: a read may end inside a character
function pollLog() {
  let fd;
  try {
    fd = fs.openSync(AGENT_LOG, "r");
  } catch {
    return;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size <= logOffset) return;
    const buf = Buffer.alloc(size - logOffset);
    fs.readSync(fd, buf, 0, buf.length, logOffset);
    logOffset = size;
    let bytes = Buffer.concat([logRest, buf]);
    for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10)) {
      const l = bytes.subarray(0, nl).toString("utf8");
      bytes = bytes.subarray(nl + 1);
      if (l.trim()) agentLog.push(JSON.parse(l));
    }
    logRest = Buffer.from(bytes);
  } finally {
    fs.closeSync(fd);
  }
}
async function waitFor(pred, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    pollLog();
    const v = pred();
    if (v) return v;
    if (Date.now() > end) {
      fail(`timed out after ${ms} ms waiting for ${what}`);
      return null;
    }
    await sleep(15);
  }
}
const suggestEntries = () => agentLog.filter((e) => e.kind === "request" && e.method === "nes/suggest");
const endsOf = (id) =>
  agentLog.filter((e) => e.kind === "notification" && (e.method === "nes/accept" || e.method === "nes/reject") && e.params?.id === id);

// ---------------------------------------------------------------------------------------------
// WorkspaceEdits: read in the form the client advertised, applied to copies of the texts.

// Returns [{key, uri, idx, before, after}] or throws with what is wrong.
function simulateWorkspaceEdit(we, what) {
  if (!we || typeof we !== "object") throw new Error(`${what}: no WorkspaceEdit: ${show(we)}`);
  const parts = [];
  if (DOC_CHANGES) {
    if (!Array.isArray(we.documentChanges)) {
      throw new Error(`${what}: expected documentChanges (the client advertises workspace.workspaceEdit.documentChanges), got ${show(we)}`);
    }
    if (we.changes) note(`${what}: WorkspaceEdit has both documentChanges and changes`);
    for (const dc of we.documentChanges) {
      if (dc?.kind) throw new Error(`${what}: unexpected resource operation ${show(dc)}`);
      const uri = dc?.textDocument?.uri;
      if (typeof uri !== "string") throw new Error(`${what}: documentChanges entry without textDocument.uri: ${show(dc)}`);
      const open = openDoc(keyOf(uri));
      const wantVersion = open ? open.version : null;
      if (dc.textDocument.version !== wantVersion) {
        throw new Error(`${what}: documentChanges version ${show(dc.textDocument.version)} for ${uri}, expected ${show(wantVersion)} (${open ? "the editor's version of the open document" : "null: the file is not open"})`);
      }
      parts.push({ uri, edits: dc.edits });
    }
  } else {
    if (we.documentChanges) throw new Error(`${what}: documentChanges although the client does not advertise them: ${show(we)}`);
    if (!we.changes || typeof we.changes !== "object") throw new Error(`${what}: expected changes, got ${show(we)}`);
    for (const [uri, edits] of Object.entries(we.changes)) parts.push({ uri, edits });
  }
  const out = new Map();
  for (const { uri, edits } of parts) {
    const key = keyOf(uri);
    if (out.has(key)) throw new Error(`${what}: ${uri} appears twice in the WorkspaceEdit`);
    const before = textOfKey(key);
    if (before === null) throw new Error(`${what}: edit of ${uri}, which does not exist`);
    const idx = toIdx(before, edits, `${what} ${uri}`);
    out.set(key, { key, uri, idx, before, after: applyIdx(before, idx) });
  }
  return out;
}

// Applies a simulated edit for real: open documents through didChange (the edits from the last
// to the first, so each range holds on the text after the previous ones), other files on disk.
async function applyForReal(sim) {
  for (const part of sim.values()) {
    const open = openDoc(part.key);
    if (open) {
      const sorted = [...part.idx].sort((a, b) => b.s - a.s || b.e - a.e);
      await didChange(open.uri, sorted);
      check(docs.get(open.uri).text === part.after, `applying ${open.uri}: ${diffText(part.after, docs.get(open.uri).text)}`);
    } else {
      fs.writeFileSync(part.key, part.after);
    }
  }
}

// Compares simulated results with the expected texts (Map key -> text).
function checkEffects(what, sim, expected) {
  let ok = true;
  for (const [key, text] of expected) {
    const got = sim.get(key);
    if (!got) {
      fail(`${what}: the edit does not touch ${key} (expected it to)`);
      ok = false;
    } else if (got.after !== text) {
      fail(`${what}: ${key}: ${diffText(text, got.after)}`);
      ok = false;
    }
  }
  for (const key of sim.keys()) {
    if (!expected.has(key)) {
      fail(`${what}: the edit also touches ${key}, which it should not`);
      ok = false;
    }
  }
  return ok;
}

async function applyEditRequest(rec) {
  let sim;
  try {
    sim = simulateWorkspaceEdit(rec.params?.edit, "workspace/applyEdit");
  } catch (err) {
    fail(err.message);
    rec.sim = null;
    return { applied: false, failureReason: err.message };
  }
  rec.sim = sim;
  pollLog();
  rec.acceptedBefore = new Set(agentLog.filter((e) => e.method === "nes/accept").map((e) => e.params?.id));
  await applyForReal(sim);
  return { applied: true };
}

// ---------------------------------------------------------------------------------------------
// What each marker's suggestions mean, computed here from the texts the editor holds.

const isIdent = (c) => c !== undefined && /[\p{L}\p{N}\p{M}_]/u.test(c);
const LABELS = {
  EDIT: ["edit"],
  OTHER: ["other"],
  JUMP: ["jump"],
  RENAME: ["rename"],
  SAR: ["sar"],
  SARDIR: ["sardir"],
  OUTSIDE: ["outside.sibling", "outside.dotdot", "outside.parent", "outside.link"],
  OUTOPEN: ["outside.open"],
  MIX: ["edit", "jump", "rename", "sar", "outside.sibling"],
};
const labelOf = (id) => (typeof id === "string" ? id.split("-").slice(2).join("-") : undefined);

// Search matches in `text`: [{s, e}] left to right, not overlapping.
function literalMatches(text, search) {
  const out = [];
  for (let i = text.indexOf(search); i >= 0; i = text.indexOf(search, i + search.length)) out.push({ s: i, e: i + search.length });
  return out;
}
function regexMatches(text, source) {
  const re = new RegExp(source, "gu");
  return [...text.matchAll(re)].filter((m) => m[0].length > 0).map((m) => ({ s: m.index, e: m.index + m[0].length }));
}
// Every file a folder search covers: text files under `dir`, skipping .git, binary files (a NUL
// byte) and files over 1 MiB; open documents contribute the editor's text.
function folderFiles(dir) {
  const out = [];
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) {
      if (ent.name !== ".git") out.push(...folderFiles(p));
    } else if (ent.isFile()) {
      const buf = fs.readFileSync(p);
      if (buf.length > 1 << 20 || buf.includes(0)) continue;
      out.push(path.resolve(p));
    }
  }
  return out;
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// ctx: {text (main at request time), line, lineText, args}. Returns Map label -> expectation:
// {kind, effects: Map key->text | null, title: {exact|re|startsWith, line?}, showOnAccept, mainIdx, span}
function expectations(marker, ctx) {
  const { text, line } = ctx;
  const ls = lines(text);
  const lineStart = ls[line].start;
  const lineText = text.slice(lineStart, ls[line].contentEnd);
  const argv = lineText.slice(lineText.indexOf(marker) + marker.length).trim().split(/\s+/).filter(Boolean);
  const mainKey = keyOf(MAIN);
  const out = new Map();

  const editOf = (idx, cursorAfterIdx) => {
    const after = applyIdx(text, idx);
    const s = Math.min(...idx.map((x) => x.s));
    const e = Math.max(...idx.map((x) => x.e));
    const merged = applyIdx(text.slice(s, e), idx.map((x) => ({ s: x.s - s, e: x.e - s, t: x.t })));
    return {
      kind: "edit",
      effects: new Map([[mainKey, after]]),
      mainIdx: idx,
      span: { s, e, text: merged },
      title: idx.length === 1
        ? { edit: { old: text.slice(idx[0].s, idx[0].e), new: idx[0].t, line: posFromIndex(text, idx[0].s).line + 1, file: "main.go" } }
        : { re: /^Next edit: `[^]*` → `[^]*` \((?:line |main\.go:)(\d+)\)$/, line: posFromIndex(text, s).line + 1, guess: `Next edit: \`${text.slice(s, e)}\` → \`${merged}\` (line ${posFromIndex(text, s).line + 1})` },
      showOnAccept: cursorAfterIdx === undefined ? null : { uri: MAIN, text: after, index: cursorAfterIdx },
      // "selection = its range": for several edits, which range is not said (all of them, the
      // first one?), so only a single edit's is judged.
      selection: { uri: MAIN, range: rangeOf(text, s, e), loose: idx.length > 1 },
    };
  };
  const edit = () => {
    const idx = [];
    const old = lineText.indexOf("old");
    if (old >= 0) idx.push({ s: lineStart + old, e: lineStart + old + 3, t: "fresh" });
    const smile = lineText.indexOf("\u{1F600}");
    if (smile >= 0) idx.push({ s: lineStart + smile, e: lineStart + smile + 2, t: "\u{1F389}\u{1F389}" });
    if (line + 1 < ls.length) idx.push({ s: ls[line + 1].start, e: ls[line + 1].start, t: "\t// \u2713 edited\n" });
    return editOf(idx);
  };
  const mixEdit = () => {
    const old = lineText.indexOf("old");
    const t = "fresh\u2713";
    return editOf([{ s: lineStart + old, e: lineStart + old + 3, t }], lineStart + old + t.length);
  };
  const other = () => {
    const rel = argv[0] || "src/util.go";
    const key = keyOf(uriOf(rel));
    const t = textOfKey(key);
    const i = t.indexOf("\u{10400}");
    const where = i < 0 ? 0 : i + 2;
    const ins = "\u00e9\u{1F389}";
    const after = t.slice(0, where) + ins + t.slice(where);
    return {
      kind: "edit",
      effects: new Map([[key, after]]),
      title: { edit: { old: "", new: ins, line: posFromIndex(t, where).line + 1, file: path.basename(rel), other: true } },
      showOnAccept: { uri: uriOf(rel), text: after, index: where + ins.length },
      selection: { uri: uriOf(rel), range: rangeOf(t, where, where) },
    };
  };
  const jump = () => {
    const t = textOfKey(keyOf(UTIL));
    const i = Math.max(t.indexOf("ping"), 0);
    const p = posFromIndex(t, i);
    return {
      kind: "jump",
      effects: null,
      title: { jump: { file: "util.go", line: p.line + 1 } },
      showOnAccept: { uri: UTIL, text: t, index: i },
      selection: { uri: UTIL, range: { start: p, end: p } },
    };
  };
  const rename = () => {
    const [ident, newName] = [argv[0], argv[1]];
    let at = -1;
    for (let k = lineText.indexOf(ident); k >= 0; k = lineText.indexOf(ident, k + 1)) {
      if (!isIdent(lineText[k - 1]) && !isIdent(lineText[k + ident.length])) {
        at = k;
        break;
      }
    }
    if (at < 0) throw new Error(`no ${ident} on ${show(lineText)}`);
    const idx = [];
    for (const m of text.matchAll(/[\p{L}\p{N}\p{M}_]+/gu)) {
      if (m[0] === ident) idx.push({ s: m.index, e: m.index + ident.length, t: newName });
    }
    return {
      kind: "rename",
      effects: new Map([[mainKey, applyIdx(text, idx)]]),
      exactEdits: new Map([[mainKey, idx]]),
      title: { rename: { old: ident, new: newName, n: idx.length } },
      showOnAccept: null,
      selection: { uri: MAIN, range: rangeOf(text, lineStart + at, lineStart + at + ident.length), loose: true },
    };
  };
  const sar = () => {
    const ms = literalMatches(text, "(\u00e7a)+");
    const idx = ms.map((m) => ({ ...m, t: "$1 \u2713" }));
    return {
      kind: "searchAndReplace",
      effects: new Map([[mainKey, applyIdx(text, idx)]]),
      exactEdits: new Map([[mainKey, idx]]),
      title: { sar: { search: "(\u00e7a)+", replace: "$1 \u2713", n: ms.length, files: ["main.go"], mode: "literal" } },
      showOnAccept: null,
      selection: { uri: MAIN, loose: true },
    };
  };
  const sardir = () => {
    const effects = new Map();
    const exactEdits = new Map();
    let n = 0;
    for (const key of folderFiles(root)) {
      const t = textOfKey(key);
      const ms = regexMatches(t, "tmp_\\d+");
      if (!ms.length) continue;
      n += ms.length;
      const idx = ms.map((m) => ({ ...m, t: "slot" }));
      effects.set(key, applyIdx(t, idx));
      exactEdits.set(key, idx);
    }
    return {
      kind: "searchAndReplace",
      effects,
      exactEdits,
      title: { sar: { search: "tmp_\\d+", replace: "slot", n, files: [...effects.keys()].map((k) => path.basename(k)), mode: "regex" } },
      showOnAccept: null,
      selection: { loose: true },
    };
  };
  const refused = (target) => ({ kind: "searchAndReplace", refused: true, target });

  for (const label of LABELS[marker]) {
    if (label === "edit") out.set(label, marker === "MIX" ? mixEdit() : edit());
    else if (label === "other") out.set(label, other());
    else if (label === "jump") out.set(label, jump());
    else if (label === "rename") out.set(label, rename());
    else if (label === "sar") out.set(label, sar());
    else if (label === "sardir") out.set(label, sardir());
    else {
      const targets = {
        "outside.sibling": "a sibling folder (\"work space2\")",
        "outside.dotdot": "\"<root>/../outside.txt\"",
        "outside.parent": "the parent folder \"<root>/..\"",
        "outside.link": "\"<root>/leak.txt\", a symlink to a file outside,",
        "outside.open": "an open document",
      };
      out.set(label, refused(targets[label]));
    }
  }
  return out;
}

// The edit suggestion of the requested document, if the marker has one (completion, inline edit).
const mainEdit = (exps) => {
  const e = exps.get("edit");
  return e && e.mainIdx ? e : null;
};

// ---------------------------------------------------------------------------------------------
// Suggestion ids and how each one must end.

const want = new Map(); // id -> {end: "accept"|"rejected"|"refused"|"drop", where}
function expectEnd(id, end, where) {
  const prev = want.get(id);
  if (prev && prev.end !== "drop" && prev.end !== end) fail(`${id}: ended twice by this editor (${prev.end} at ${prev.where}, ${end} at ${where})`);
  want.set(id, { end, where });
}

// The nes/suggest this editor's request caused: the one new entry after `before`.
async function newSuggest(before, what, expect) {
  const entry = await waitFor(() => suggestEntries()[before], 6000, `the nes/suggest for ${what}`);
  if (!entry) return null;
  await sleep(30);
  pollLog();
  const extra = suggestEntries().length - before - 1;
  if (extra > 0) note(`${what}: ${extra + 1} nes/suggest for one editor request`);
  const p = entry.params ?? {};
  check(sameKey(p.uri, MAIN), `${what}: nes/suggest uri ${show(p.uri)}, expected ${MAIN}`);
  check(p.version === expect.version, `${what}: nes/suggest version ${show(p.version)}, expected ${expect.version}`);
  check(isDeepStrictEqual(plainPos(p.position), expect.position),
    `${what}: nes/suggest position ${show(p.position)}, expected ${show(expect.position)} (${AGENT_ENCODING})`);
  if (expect.triggerKind) {
    check(p.triggerKind === expect.triggerKind, `${what}: nes/suggest triggerKind ${show(p.triggerKind)}, expected ${show(expect.triggerKind)}`);
  } else {
    noteOnce(`triggerKind ${what.split(" ")[1]} ${p.triggerKind}`, `${what.split(" ")[1]} request → nes/suggest triggerKind ${show(p.triggerKind)}`);
  }
  if (expect.diagnostics) {
    const got = (p.context?.diagnostics ?? []).map((d) => ({ uri: keyOf(d.uri), range: plainRange(d.range), severity: d.severity, message: d.message }));
    const exp = expect.diagnostics.map((d) => ({ ...d, uri: keyOf(d.uri) }));
    check(isDeepStrictEqual(got, exp), `${what}: nes/suggest context.diagnostics ${show(p.context?.diagnostics)}, expected ${show(expect.diagnostics)}`);
  }
  const ids = new Map();
  for (const s of entry.result?.suggestions ?? []) {
    ids.set(labelOf(s.id), s.id);
    if (!want.has(s.id)) want.set(s.id, { end: "drop", where: what });
  }
  const labels = LABELS[expect.marker];
  check(isDeepStrictEqual([...ids.keys()], labels), `${what}: the agent suggested ${show([...ids.keys()])}, expected ${show(labels)}`);
  for (const l of labels) if (l.startsWith("outside.") && ids.has(l)) expectEnd(ids.get(l), "refused", what);
  return { entry, ids };
}

// ---------------------------------------------------------------------------------------------
// Editor actions.

let lineNo = 0;
async function typeMarkerLine(content) {
  const doc = docs.get(MAIN);
  const ls = lines(doc.text);
  let line = ls.length - 1;
  while (line > 0 && doc.text.slice(ls[line].start, ls[line].contentEnd) !== "}") line--;
  const at = ls[line].start;
  await didChange(MAIN, [{ s: at, e: at, t: content + "\n" }]);
  lineNo++;
  const text = docs.get(MAIN).text;
  const cursor = at + content.length;
  return { text, line, cursor, version: docs.get(MAIN).version, position: posFromIndex(text, cursor), agentPosition: posFromIndex(text, cursor, AGENT_ENCODING) };
}

const serverSince = (mark, method) => fromServer.slice(mark).filter((m) => m.method === method);

// After the editor ran an accept command for `id`: nes/accept, and window/showDocument exactly
// when the suggestion calls for one.
async function checkAccepted(id, exp, what, mark) {
  const got = await waitFor(() => endsOf(id).find((e) => e.method === "nes/accept"), 5000, `nes/accept ${id} (${what})`);
  if (got) expectEnd(id, "accept", what);
  if (exp.showOnAccept) {
    const sd = await waitFor(() => serverSince(mark, "window/showDocument")[0], 3000, `window/showDocument after accepting ${id} (${what})`);
    if (sd) {
      const { uri, text, index } = exp.showOnAccept;
      const p = posFromIndex(text, index);
      check(sameKey(sd.params?.uri, uri), `${what}: showDocument uri ${show(sd.params?.uri)}, expected ${uri}`);
      check(isDeepStrictEqual(plainRange(sd.params?.selection), { start: p, end: p }),
        `${what}: showDocument selection ${show(sd.params?.selection)}, expected ${show({ start: p, end: p })} (${ENC})`);
      check(sd.params?.takeFocus === true, `${what}: showDocument takeFocus ${show(sd.params?.takeFocus)}, expected true`);
    }
  } else {
    await sleep(150);
    const sds = serverSince(mark, "window/showDocument");
    check(sds.length === 0, `${what}: accepting ${id} sent window/showDocument ${show(sds.map((s) => s.params))}; expected none (no jump, no other file, no cursorPosition)`);
  }
}

async function runCommand(command, what) {
  try {
    return await request("workspace/executeCommand", { command: command.command, arguments: command.arguments });
  } catch (err) {
    fail(`${what}: workspace/executeCommand ${show(command)}: ${err.message}`);
    return undefined;
  }
}

function checkAcceptCommand(cmd, id, what) {
  check(cmd && cmd.command === "acp-lsp-bridge.accept" && isDeepStrictEqual(cmd.arguments, [id]) && typeof cmd.title === "string",
    `${what}: command ${show(cmd)}, expected {title, command:"acp-lsp-bridge.accept", arguments:[${show(id)}]}`);
}

// Checks one code action against its expectation; returns the simulated edit (or null).
function checkAction(action, exp, id, what) {
  check(typeof action.title === "string", `${what}: no title: ${show(action)}`);
  const t = exp.title;
  const title = action.title ?? "";
  if (t.edit) {
    // The contract: "Next edit: `old` → `new` (line N)". Also taken: "insert `new`" for an
    // insertion, "delete `old`" for a deletion, and "(file:N)" instead of "(line N)" (which
    // does not say which file an edit of another file is in).
    const { old, new: nu, line, file, other } = t.edit;
    const contract = `Next edit: \`${old}\` → \`${nu}\` (line ${line})`;
    const whats = [`\`${old}\` → \`${nu}\``];
    if (old === "") whats.push(`insert \`${nu}\``);
    if (nu === "") whats.push(`delete \`${old}\``);
    const wheres = [`(line ${line})`, `(${file}:${line})`];
    const ok = whats.some((w) => wheres.some((l) => title === `Next edit: ${w} ${l}`));
    check(ok, `${what}: title ${show(title)}, expected ${show(contract)}${other ? ` (or naming the file: "(${file}:${line})")` : ""}`);
    if (ok && title !== contract) titleForms.add(`${show(title)} for contract ${show(contract)}`);
  } else if (t.rename) {
    const { old, new: nu, n } = t.rename;
    const contract = `Rename \`${old}\` → \`${nu}\` in this file (whole-identifier matches)`;
    const m = /^Rename `([^`]*)` → `([^`]*)` in (this file|\S+) \((?:(\d+) )?whole-identifier matches\)$/.exec(title);
    if (check(m && m[1] === old && m[2] === nu && (m[3] === "this file" || m[3] === "main.go"), `${what}: title ${show(title)}, expected ${show(contract)}`)) {
      if (m[4] !== undefined) check(Number(m[4]) === n, `${what}: title ${show(title)} counts ${m[4]} matches, expected ${n}`);
      if (title !== contract) titleForms.add(`${show(title)} for contract ${show(contract)}`);
    }
  } else if (t.sar) {
    const { search, replace, n, files, mode } = t.sar;
    const contract = `Replace \`${search}\` → \`${replace}\` (${n} matches in ${files.length} files)`;
    const m = new RegExp(`^Replace \`${escapeRe(search)}\` → \`${escapeRe(replace)}\` \\((?:(literal|regex), )?(\\d+) match(?:es)? in (?:(\\d+) files?|(\\S+))\\)$`).exec(title);
    if (check(m, `${what}: title ${show(title)}, expected ${show(contract)}`)) {
      check(Number(m[2]) === n, `${what}: title ${show(title)} counts ${m[2]} matches, expected ${n}`);
      if (m[3] !== undefined) check(Number(m[3]) === files.length, `${what}: title ${show(title)} counts ${m[3]} files, expected ${files.length} (${files.join(", ")})`);
      else check(files.length === 1 && m[4] === files[0], `${what}: title ${show(title)} names ${m[4]}, expected ${files.length} files (${files.join(", ")})`);
      if (m[1] !== undefined) check(m[1] === mode, `${what}: title ${show(title)} says ${m[1]}, expected ${mode}`);
      if (title !== contract) titleForms.add(`${show(title)} for contract ${show(contract)}`);
    }
  } else if (t.re && t.line !== undefined) {
    const m = t.re.exec(action.title ?? "");
    if (check(m, `${what}: title ${show(action.title)} does not read "Next edit: \`old\` → \`new\` (line N)"`)) {
      check(Number(m[1]) === t.line, `${what}: title ${show(action.title)} names line ${m[1]}, expected ${t.line} (1-based)`);
      if (action.title !== t.guess) noteOnce("multi-edit title", `multi-edit title ${show(action.title)} (the merged span would read ${show(t.guess)})`);
    }
  } else if (t.re) {
    check(t.re.test(action.title ?? ""), `${what}: title ${show(action.title)}, expected it to match ${t.re}`);
  } else if (t.jump) {
    const m = /^Next edit: go to (.+):(\d+)$/.exec(action.title ?? "");
    if (check(m, `${what}: title ${show(action.title)}, expected "Next edit: go to ${t.jump.file}:${t.jump.line}"`)) {
      check(m[1] === t.jump.file || m[1].endsWith("/" + t.jump.file), `${what}: title names ${show(m[1])}, expected ${t.jump.file}`);
      check(Number(m[2]) === t.jump.line, `${what}: title names line ${m[2]}, expected ${t.jump.line} (1-based)`);
      if (m[1] !== t.jump.file) note(`${what}: jump title names the file as ${show(m[1])}`);
    }
  }
  if (exp.kind === "edit") {
    check(["quickfix", "refactor.rewrite"].includes(action.kind), `${what}: kind ${show(action.kind)}, expected "quickfix" or "refactor.rewrite"`);
  }
  checkAcceptCommand(action.command, id, what);
  if (exp.kind === "jump") {
    const empty = action.edit == null || isDeepStrictEqual(action.edit, { changes: {} }) || isDeepStrictEqual(action.edit, { documentChanges: [] });
    check(empty, `${what}: a jump carries an edit ${show(action.edit)}`);
    return new Map();
  }
  let sim;
  try {
    sim = simulateWorkspaceEdit(action.edit, what);
  } catch (err) {
    fail(err.message);
    return null;
  }
  checkEffects(what, sim, exp.effects);
  if (exp.exactEdits) {
    for (const [key, idx] of exp.exactEdits) {
      const got = sim.get(key)?.idx.map((x) => ({ s: x.s, e: x.e, t: x.t })).sort((a, b) => a.s - b.s);
      if (got && !isDeepStrictEqual(got, idx)) note(`${what}: ${key}: edits ${show(got)} are not one per match ${show(idx)}`);
    }
  }
  return sim;
}

const actionKinds = new Set(); // "label: kind" seen on code actions, reported once at the end
const titleForms = new Set(); // titles that carry the contract's content in other words

// Code actions at the cursor; returns {actions: Map label -> {action, id, sim}, exps, ids}.
async function codeActions(marker, m, what, { diagnostic, invoked } = {}) {
  const before = suggestEntries().length;
  const exps = expectations(marker, { text: m.text, line: m.line });
  const diagnostics = [];
  const expDiag = [];
  if (diagnostic) {
    const ls = lines(m.text);
    const s = m.text.indexOf("old", ls[m.line].start);
    diagnostics.push({ range: rangeOf(m.text, s, s + 3), severity: 1, source: "lsp-kinds-e2e", message: "undefined: old (\u00e7a \u{1F600})" });
    expDiag.push({ uri: MAIN, range: rangeOf(m.text, s, s + 3, AGENT_ENCODING), severity: "error", message: "undefined: old (\u00e7a \u{1F600})" });
  }
  let res;
  try {
    res = await request("textDocument/codeAction", {
      textDocument: { uri: MAIN },
      range: { start: m.position, end: m.position },
      context: { diagnostics, triggerKind: invoked ? 1 : 2 },
    });
  } catch (err) {
    fail(`${what}: textDocument/codeAction: ${err.message}`);
    return null;
  }
  const sug = await newSuggest(before, what, {
    marker,
    version: m.version,
    position: m.agentPosition,
    // The contract: "diagnostic" with diagnostics, "automatic" otherwise. A code action the user
    // invoked (CodeActionTriggerKind.Invoked) is noted, not judged: "manual" would be as right.
    triggerKind: diagnostic ? "diagnostic" : invoked ? null : "automatic",
    diagnostics: diagnostic ? expDiag : null,
  });
  if (!sug) return null;
  const actions = new Map();
  if (!check(res == null || Array.isArray(res), `${what}: codeAction result ${show(res)} is not an array`)) return null;
  for (const a of res ?? []) {
    if (typeof a?.command === "string") {
      fail(`${what}: a bare Command ${show(a)} although the client supports CodeAction literals`);
      continue;
    }
    const id = a?.command?.arguments?.[0];
    const label = [...sug.ids].find(([, v]) => v === id)?.[0];
    if (!label) {
      fail(`${what}: action ${show(a)} is not for a suggestion of this request (ids ${show([...sug.ids.values()])})`);
      continue;
    }
    if (actions.has(label)) fail(`${what}: two actions for ${id}`);
    const exp = exps.get(label);
    if (exp.refused) {
      fail(`${what}: the suggestion ${id} targets a uri outside the workspace, yet became the action ${show(a)}`);
      continue;
    }
    actionKinds.add(`${label}: ${show(a.kind)}`);
    actions.set(label, { action: a, id, sim: checkAction(a, exp, id, `${what} ${label}`) });
  }
  for (const [label, exp] of exps) {
    if (!exp.refused) check(actions.has(label), `${what}: no code action for the ${label} suggestion ${show(sug.ids.get(label))}; got ${show(res)}`);
  }
  await checkRefused(sug, exps, what);
  return { actions, exps, ids: sug.ids };
}

// Suggestions outside the workspace end with a nes/reject, and the files stay as they were.
async function checkRefused(sug, exps, what) {
  for (const [label, exp] of exps) {
    if (!exp.refused) continue;
    const id = sug.ids.get(label);
    const end = Date.now() + 2000;
    let r;
    while (!(r = endsOf(id)[0]) && Date.now() < end) {
      await sleep(15);
      pollLog();
    }
    if (!r) fail(`${what}: ${id} targets ${exp.target} outside the workspace folders, yet was not refused (no nes/reject within 2 s of the agent's answer)`);
    else {
      check(r.method === "nes/reject", `${what}: ${id} (outside the workspace) ended with ${r.method}`);
      noteOnce(`refused ${r.method} ${r.params?.reason}`, `a suggestion outside the workspace ends with ${r.method} reason ${show(r.params?.reason)}`);
    }
  }
}

// The code-action surface: check every action, then apply one and run its command.
async function attemptCodeAction(marker, content, { accept, diagnostic, far } = {}) {
  const what = `${marker} code action #${lineNo + 1}`;
  step = what;
  const m = await typeMarkerLine(content);
  const r = await codeActions(marker, m, what, { diagnostic });
  if (!r) return;
  if (far) {
    // Requested far from the cursor line: no new nes/suggest (the document's suggestions are
    // live for its version); the jump, the rename and the search-and-replace only.
    const before = suggestEntries().length;
    const res = await request("textDocument/codeAction", {
      textDocument: { uri: MAIN },
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      context: { diagnostics: [] },
    });
    pollLog();
    check(suggestEntries().length === before, `${what} (far range): the bridge asked the agent again although the document's suggestions are live for its version`);
    const got = (res ?? []).map((a) => labelOf(a?.command?.arguments?.[0])).sort();
    const exp = [...r.exps.keys()].filter((l) => l !== "edit" && !r.exps.get(l).refused).sort();
    check(isDeepStrictEqual(got, exp), `${what} (far range, line 0): actions for ${show(got)}, expected ${show(exp)} (an edit 3+ lines away is not near; jump/rename/searchAndReplace always are)`);
  }
  if (!accept) return;
  const chosen = r.actions.get(accept);
  if (!check(chosen, `${what}: no ${accept} action to accept`)) return;
  // LSP: the edit first, then the command.
  if (chosen.sim) await applyForReal(chosen.sim);
  const mark = fromServer.length;
  await runCommand(chosen.action.command, what);
  await checkAccepted(chosen.id, r.exps.get(accept), what, mark);
}

// The completion surface (the editor has no inline completion).
async function attemptCompletion(marker, content) {
  const what = `${marker} completion #${lineNo + 1}`;
  step = what;
  const m = await typeMarkerLine(content);
  const exps = expectations(marker, { text: m.text, line: m.line });
  const before = suggestEntries().length;
  let res;
  try {
    res = await request("textDocument/completion", { textDocument: { uri: MAIN }, position: m.position, context: { triggerKind: 1 } });
  } catch (err) {
    fail(`${what}: ${err.message}`);
    return;
  }
  const sug = await newSuggest(before, what, { marker, version: m.version, position: m.agentPosition });
  if (!sug) return;
  const items = Array.isArray(res) ? res : (res?.items ?? []);
  if (res && !Array.isArray(res)) check(Array.isArray(res.items), `${what}: completion result ${show(res)}`);
  const exp = mainEdit(exps);
  await checkRefused(sug, exps, what);
  if (!exp) {
    check(items.length === 0, `${what}: expected no completion item (no edit suggestion for this document), got ${show(items)}`);
    return;
  }
  const id = sug.ids.get("edit");
  if (!check(items.length === 1, `${what}: expected one completion item (the edit suggestion ${id}), got ${show(items)}`)) return;
  const item = items[0];
  for (const f of ["label", "detail", "sortText"]) check(typeof item[f] === "string", `${what}: item.${f} ${show(item[f])}, expected a string; item ${show(item)}`);
  if (item.filterText === undefined) filterless.add(what);
  else check(typeof item.filterText === "string", `${what}: item.filterText ${show(item.filterText)}, expected a string`);
  checkAcceptCommand(item.command, id, what);
  const te = item.textEdit;
  if (!check(te && te.range && typeof te.newText === "string", `${what}: textEdit ${show(te)}, expected {range, newText}`)) return;
  const r = te.range;
  check(r.start?.line === m.position.line && r.end?.line === m.position.line,
    `${what}: textEdit range ${show(r)} is not on the cursor line ${m.position.line} (LSP requires a single-line range containing the position)`);
  check(r.start?.character <= m.position.character && m.position.character <= r.end?.character,
    `${what}: textEdit range ${show(r)} does not contain the cursor ${show(m.position)}`);
  let idx;
  try {
    idx = toIdx(m.text, [te, ...(item.additionalTextEdits ?? [])], what);
    const after = applyIdx(m.text, idx);
    check(after === exp.effects.get(keyOf(MAIN)), `${what}: textEdit + additionalTextEdits: ${diffText(exp.effects.get(keyOf(MAIN)), after)}`);
  } catch (err) {
    fail(`${what}: ${err.message}; item ${show(item)}`);
    return;
  }
  // A client filters items by the text between the textEdit's start and the cursor.
  const typed = m.text.slice(idx[0].s, m.cursor);
  if (!fuzzy(typed, item.filterText ?? item.label)) {
    note(`${what}: filterText ${show(item.filterText)} does not match the typed text ${show(typed)} (range start to cursor): a client that filters (VS Code) would hide the item`);
  }
  await didChange(MAIN, [...idx].sort((a, b) => b.s - a.s));
  const mark = fromServer.length;
  await runCommand(item.command, what);
  await checkAccepted(id, exp, what, mark);
}

function fuzzy(typed, target) {
  if (typeof target !== "string") return false;
  let j = 0;
  const t = target.toLowerCase();
  for (const ch of typed.toLowerCase()) {
    j = t.indexOf(ch, j);
    if (j < 0) return false;
    j += ch.length;
  }
  return true;
}

const filterless = new Set();

// The Copilot-style inline edit surface.
let focusSent = false;
async function attemptInlineEdit(marker, content) {
  const what = `${marker} copilotInlineEdit #${lineNo + 1}`;
  step = what;
  const m = await typeMarkerLine(content);
  if (!focusSent) {
    focusSent = true;
    // Earlier requests already told the agent where the user is (inferred focus); look only at
    // what this notification brings.
    const before = agentLog.length;
    await notify("textDocument/didFocus", { textDocument: { uri: MAIN } });
    const f = await waitFor(() => agentLog.slice(before).find((e) => e.method === "document/didFocus"), 4000, "document/didFocus at the agent after textDocument/didFocus");
    if (f) {
      check(sameKey(f.params?.uri, MAIN), `document/didFocus uri ${show(f.params?.uri)}, expected ${MAIN}`);
      check(f.params?.version === m.version, `document/didFocus version ${show(f.params?.version)}, expected ${m.version}`);
      note(`document/didFocus carried ${show(f.raw)}`);
    }
  }
  const exps = expectations(marker, { text: m.text, line: m.line });
  const before = suggestEntries().length;
  const params = { textDocument: { uri: MAIN, version: m.version }, position: m.position, context: { triggerKind: 1 } };
  let res;
  try {
    res = await request("textDocument/copilotInlineEdit", params);
  } catch (err) {
    fail(`${what}: ${err.message}`);
    return;
  }
  const sug = await newSuggest(before, what, { marker, version: m.version, position: m.agentPosition });
  if (!sug) return;
  await checkRefused(sug, exps, what);
  if (!check(res && Array.isArray(res.edits), `${what}: result ${show(res)}, expected {edits:[...]}`)) return;
  const exp = mainEdit(exps);
  // A request for a version that is not the bridge's current one gets no edit.
  const stale = await request("textDocument/copilotInlineEdit", { ...params, textDocument: { uri: MAIN, version: m.version - 1 } });
  check(isDeepStrictEqual(stale?.edits, []), `${what}: a request for the stale version ${m.version - 1} got ${show(stale)}, expected {edits:[]}`);
  pollLog();
  if (suggestEntries().length > before + 1) note(`${what}: the stale-version request reached the agent`);
  if (!exp) {
    check(res.edits.length === 0, `${what}: expected no edit (no edit suggestion for this document), got ${show(res.edits)}`);
    return;
  }
  const id = sug.ids.get("edit");
  if (!check(res.edits.length === 1, `${what}: expected one edit (suggestion ${id}), got ${show(res.edits)}`)) return;
  const e = res.edits[0];
  check(isDeepStrictEqual(e.textDocument, { uri: MAIN, version: m.version }), `${what}: textDocument ${show(e.textDocument)}, expected it echoed as sent ${show(params.textDocument)}`);
  checkAcceptCommand(e.command, id, what);
  let idx;
  try {
    idx = toIdx(m.text, [{ range: e.range, newText: e.text }], what);
    const after = applyIdx(m.text, idx);
    check(after === exp.effects.get(keyOf(MAIN)), `${what}: the edit ${show({ range: e.range, text: e.text })}: ${diffText(exp.effects.get(keyOf(MAIN)), after)}`);
    const span = { range: rangeOf(m.text, exp.span.s, exp.span.e), text: exp.span.text };
    if (!isDeepStrictEqual({ range: plainRange(e.range), text: e.text }, span)) note(`${what}: edit ${show({ range: e.range, text: e.text })} is not the smallest merged span ${show(span)}`);
  } catch (err) {
    fail(`${what}: ${err.message}`);
    return;
  }
  await notify("textDocument/didShowInlineEdit", { item: e });
  await didChange(MAIN, idx);
  const mark = fromServer.length;
  await runCommand(e.command, what);
  await checkAccepted(id, exp, what, mark);
}

// acp-lsp-bridge.reject: [id] for each action, [{uri}], or no argument.
async function attemptReject(marker, content, form) {
  const what = `${marker} reject ${form} #${lineNo + 1}`;
  step = what;
  const m = await typeMarkerLine(content);
  const r = await codeActions(marker, m, what, { invoked: true });
  if (!r) return;
  const live = [...r.exps].filter(([, e]) => !e.refused).map(([l]) => r.ids.get(l));
  if (form === "id") {
    for (const { id } of r.actions.values()) await runCommand({ command: "acp-lsp-bridge.reject", arguments: [id] }, what);
  } else if (form === "uri") {
    await runCommand({ command: "acp-lsp-bridge.reject", arguments: [{ uri: MAIN }] }, what);
  } else {
    await runCommand({ command: "acp-lsp-bridge.reject", arguments: [] }, what);
  }
  const targets = form === "id" ? [...r.actions.values()].map((a) => a.id) : live;
  for (const id of targets) {
    const end = await waitFor(() => endsOf(id)[0], 4000, `nes/reject of ${id} (${what})`);
    if (end) {
      check(end.method === "nes/reject" && end.params?.reason === "rejected", `${what}: ${id} ended with ${end.method} ${show(end.raw)}, expected nes/reject reason "rejected"`);
      expectEnd(id, "rejected", what);
    }
  }
}

// acp-lsp-bridge.suggest, answered "Apply" or "Dismiss".
async function attemptSuggest(marker, content, answer) {
  const what = `${marker} suggest→${answer} #${lineNo + 1}`;
  step = what;
  const m = await typeMarkerLine(content);
  const exps = expectations(marker, { text: m.text, line: m.line });
  const before = suggestEntries().length;
  const mark = fromServer.length;
  choice = answer;
  const res = await runCommand({ command: "acp-lsp-bridge.suggest", arguments: [{ uri: MAIN, position: m.position }] }, what);
  if (res != null) note(`${what}: executeCommand answered ${show(res)}`);
  const sug = await newSuggest(before, what, { marker, version: m.version, position: m.agentPosition, triggerKind: "manual" });
  if (!sug) {
    choice = null;
    return;
  }
  await checkRefused(sug, exps, what);
  const offerable = [...exps].filter(([, e]) => !e.refused);
  if (!offerable.length) {
    await sleep(300);
    check(serverSince(mark, "window/showMessageRequest").length === 0 && serverSince(mark, "workspace/applyEdit").length === 0,
      `${what}: nothing may be offered when every suggestion is outside the workspace; got ${show(fromServer.slice(mark).map((x) => x.method))}`);
    choice = null;
    return;
  }
  const ids = new Map(offerable.map(([l]) => [sug.ids.get(l), l]));
  // The offered one is the one that ends as the answer says: accepted on "Apply", rejected by the
  // user on "Dismiss". The others may end before it (applying an edit ends a jump beside it) and in
  // the same write, the bridge sending the ends of suggestions together.
  const endedAsAnswered = (e) =>
    answer === "Apply" ? e.method === "nes/accept" : e.method === "nes/reject" && e.params?.reason === "rejected";
  const ended = await waitFor(
    () => agentLog.find((e) => e.kind === "notification" && ids.has(e.params?.id) && endedAsAnswered(e)),
    8000,
    `the suggestion offered by acp-lsp-bridge.suggest to end (${answer}) (${what})`,
  );
  choice = null;
  const msgs = serverSince(mark, "window/showMessageRequest");
  check(msgs.length === 1, `${what}: expected one window/showMessageRequest, got ${show(msgs.map((x) => x.params))}`);
  const titles = (msgs[0]?.params?.actions ?? []).map((a) => a?.title);
  check(titles.includes("Apply") && titles.includes("Dismiss"), `${what}: showMessageRequest actions ${show(titles)}, expected Apply and Dismiss`);
  if (!ended) return;
  const id = ended.params?.id;
  const label = ids.get(id);
  const exp = exps.get(label);
  if (marker === "MIX") noteOnce(`MIX offer ${label}`, `acp-lsp-bridge.suggest offers the ${label} of a MIX`);
  // The suggestion is shown before it is offered.
  const order = fromServer.slice(mark).map((x) => x.method);
  const sdAt = order.indexOf("window/showDocument");
  const msgAt = order.indexOf("window/showMessageRequest");
  if (check(sdAt >= 0 && sdAt < msgAt, `${what}: expected window/showDocument before window/showMessageRequest, got ${show(order)}`)) {
    const sd = fromServer[mark + sdAt].params;
    if (exp.selection?.uri) check(sameKey(sd?.uri, exp.selection.uri), `${what}: showDocument uri ${show(sd?.uri)}, expected ${exp.selection.uri}`);
    if (exp.selection?.range && !exp.selection.loose) {
      check(isDeepStrictEqual(plainRange(sd?.selection), exp.selection.range), `${what}: showDocument selection ${show(sd?.selection)}, expected the suggestion's range ${show(exp.selection.range)} (${ENC})`);
    } else {
      noteOnce(`suggest showDocument ${label}`, `acp-lsp-bridge.suggest shows a ${label} suggestion with ${show(sd)}`);
    }
  }
  const applies = serverSince(mark, "workspace/applyEdit");
  if (answer === "Apply") {
    check(ended.method === "nes/accept", `${what}: "Apply" ended ${id} with ${ended.method} ${show(ended.raw)}, expected nes/accept`);
    expectEnd(id, "accept", what);
    if (exp.kind === "jump") {
      note(`${what}: "Apply" on a jump: ${applies.length} workspace/applyEdit ${show(applies.map((a) => a.params))}`);
    } else if (check(applies.length === 1, `${what}: "Apply": expected one workspace/applyEdit, got ${applies.length}`)) {
      const a = applies[0];
      if (a.sim) checkEffects(`${what} workspace/applyEdit`, a.sim, exp.effects);
      check(a.acceptedBefore && !a.acceptedBefore.has(id), `${what}: nes/accept ${id} reached the agent before the editor answered workspace/applyEdit`);
    }
  } else {
    check(ended.method === "nes/reject" && ended.params?.reason === "rejected", `${what}: "Dismiss" ended ${id} with ${ended.method} ${show(ended.raw)}, expected nes/reject "rejected"`);
    expectEnd(id, "rejected", what);
    check(applies.length === 0, `${what}: "Dismiss" yet workspace/applyEdit ${show(applies.map((a) => a.params))}`);
  }
}

// acp-lsp-bridge.suggest left unanswered: the suggestion stays live and is a code action. Then
//   "accepted": the editor accepts it there, and answers the stale prompt "Apply";
//   "typed": the user types elsewhere in the document (the suggestion is no longer for its
//            version), and answers the stale prompt "Apply".
// Either way nothing more may happen: no workspace/applyEdit of an edit computed for an older
// text (with `changes` a client applies it at the old positions), no second end.
async function attemptSuggestUnanswered(marker, content, mode) {
  const what = `${marker} suggest→(no answer, ${mode}) #${lineNo + 1}`;
  step = what;
  const m = await typeMarkerLine(content);
  const before = suggestEntries().length;
  const mark = fromServer.length;
  let release;
  choice = "hold";
  held = new Promise((resolve) => (release = resolve));
  // The command's own answer is not judged: after a stale "Apply" an error is as right as null.
  const cmd = request("workspace/executeCommand", { command: "acp-lsp-bridge.suggest", arguments: [{ uri: MAIN, position: m.position }] }, 15000).then(
    (res) => res != null && note(`${what}: executeCommand answered ${show(res)}`),
    (err) => note(`${what}: executeCommand answered ${err.message}`),
  );
  const sug = await newSuggest(before, what, { marker, version: m.version, position: m.agentPosition, triggerKind: "manual" });
  const asked = await waitFor(() => serverSince(mark, "window/showMessageRequest")[0], 5000, `window/showMessageRequest (${what})`);
  if (sug && asked) {
    const id = sug.ids.get("edit");
    const exps = expectations(marker, { text: m.text, line: m.line });
    const caBefore = suggestEntries().length;
    const res = await request("textDocument/codeAction", {
      textDocument: { uri: MAIN },
      range: { start: m.position, end: m.position },
      context: { diagnostics: [], triggerKind: 2 },
    });
    pollLog();
    check(suggestEntries().length === caBefore, `${what}: the code action request asked the agent again although ${id} is live for this version`);
    const a = (res ?? []).find((x) => x?.command?.arguments?.[0] === id);
    if (check(a, `${what}: the suggestion offered by the unanswered prompt (${id}) is not a code action: ${show(res)}`) && mode === "typed") {
      // Type on the first line, away from the suggestion.
      await didChange(MAIN, [{ s: 0, e: 0, t: "// typed while the prompt was open\n" }]);
      await sleep(100);
    } else if (a) {
      const simA = checkAction(a, exps.get("edit"), id, `${what} code action`);
      if (simA) await applyForReal(simA);
      const mark2 = fromServer.length;
      await runCommand(a.command, what);
      await checkAccepted(id, exps.get("edit"), what, mark2);
    }
    const mark3 = fromServer.length;
    choice = "Apply";
    release();
    await sleep(500);
    const late = serverSince(mark3, "workspace/applyEdit");
    check(late.length === 0, `${what}: answering the stale prompt "Apply" ${mode === "typed" ? "after the document moved on" : "after the suggestion was accepted through its code action"} sent workspace/applyEdit ${show(late.map((x) => x.params))}; expected nothing (the suggestion had ended)`);
  } else {
    release?.();
  }
  await cmd;
  choice = null;
  held = null;
}

// ---------------------------------------------------------------------------------------------
// The scenario.

const LINES = {
  EDIT: "\tv := old(\u00e7a, \u{1F600}) + count2 // EDIT",
  OTHER: "\t_ = \"\u{10400}\" // OTHER",
  OTHER_OPEN: "\t_ = 1 // OTHER src/open.go",
  JUMP: "\tgo ping() // JUMP",
  RENAME: "\tx := \u{1F600}count + count2 + _count + (count) // RENAME count tally",
  SAR: "\ts := \"(\u00e7a)+ (\u00e7a)(\u00e7a)+ \u00e7a+\" // SAR",
  SARDIR: "\tt := tmp_7 + tmp_x + 日本tmp_88 // SARDIR",
  OUTSIDE: "\t// secret OUTSIDE",
  OUTOPEN: "\t// secret OUTOPEN",
  MIX: "\tm := old(count) + \"(\u00e7a)+\" // MIX count tally",
};
let refills = 0;
// More matches on disk before each folder search, so that it always spans several files.
function refill() {
  refills++;
  fs.appendFileSync(file("src/util.go"), `// tmp_${100 + refills}\n`);
  fs.appendFileSync(file("docs/notes \u00e9.txt"), `\n\u{1F600} tmp_${200 + refills} tmp_${300 + refills}`);
}

async function run() {
  step = "initialize";
  const capabilities = {
    general: { positionEncodings: OFFERED },
    textDocument: {
      synchronization: { dynamicRegistration: false, didSave: true },
      codeAction: {
        dynamicRegistration: false,
        codeActionLiteralSupport: { codeActionKind: { valueSet: ["", "quickfix", "refactor", "refactor.rewrite", "source"] } },
      },
      completion: { dynamicRegistration: false, completionItem: { snippetSupport: false } },
    },
    workspace: {
      workspaceFolders: true,
      applyEdit: true,
      workspaceEdit: { documentChanges: DOC_CHANGES },
      executeCommand: { dynamicRegistration: false },
    },
    window: { showDocument: { support: true }, showMessage: { messageActionItem: { additionalPropertiesSupport: false } } },
  };
  const init = await request("initialize", {
    processId: process.pid,
    clientInfo: { name: "lsp-kinds-e2e", version: "1" },
    rootUri: ROOT_URI,
    workspaceFolders: [{ uri: ROOT_URI, name: "work space" }],
    capabilities,
  }, 10000);
  const caps = init?.capabilities ?? {};
  check((caps.positionEncoding ?? "utf-16") === ENC, `positionEncoding ${show(caps.positionEncoding)}, expected ${ENC}`);
  check(caps.codeActionProvider, `no codeActionProvider in ${show(caps)}`);
  check(caps.completionProvider, `no completionProvider although the client has no inline completion: ${show(caps)}`);
  const cmds = caps.executeCommandProvider?.commands ?? [];
  for (const c of ["acp-lsp-bridge.accept", "acp-lsp-bridge.reject", "acp-lsp-bridge.suggest"]) {
    check(cmds.includes(c), `executeCommandProvider.commands ${show(cmds)} lacks ${c}`);
  }
  await notify("initialized", {});

  step = "agent ready";
  // The bridge says when the agent is ready (window/logMessage); edits before that are folded
  // into the didOpen it sends then.
  await waitFor(() => fromServer.some((m) => m.method === "window/logMessage" && / is ready \(/.test(m.params?.message ?? "")), 10000, "the bridge's word that the agent is ready");

  step = "open";
  await didOpen(MAIN, TEXT_MAIN, "go");
  await didOpen(OPEN, fs.readFileSync(file("src/open.go"), "utf8"), "go");
  // The editor's text of main.go now differs from the disk's.
  {
    const t = docs.get(MAIN).text;
    const at = t.indexOf("func main");
    await didChange(MAIN, [{ s: at, e: at, t: "// editor only: tmp_3 (\u00e7a)+ count \u{1F600}\n" }]);
  }

  for (const marker of ["EDIT", "OTHER", "JUMP", "RENAME", "SAR", "SARDIR", "OUTSIDE", "OUTOPEN", "MIX"]) {
    // A file outside the workspace folders that the editor has open.
    if (marker === "OUTOPEN") await didOpen(OUTSIDE_OPEN, fs.readFileSync(OUTSIDE_FILES[0], "utf8"), "plaintext");
    const content = LINES[marker];
    if (marker === "SARDIR") refill();
    await attemptCodeAction(marker, content, {
      accept: { EDIT: "edit", OTHER: "other", JUMP: "jump", RENAME: "rename", SAR: "sar", SARDIR: "sardir", MIX: "edit" }[marker],
      diagnostic: marker === "EDIT",
      far: marker === "MIX",
    });
    if (marker === "OTHER") await attemptCodeAction(marker, LINES.OTHER_OPEN, { accept: "other" });
    if (marker === "MIX") await attemptCodeAction(marker, content, { accept: "rename" });
    await attemptCompletion(marker, content);
    await attemptInlineEdit(marker, content);
    await attemptReject(marker, content, { EDIT: "id", MIX: "uri", JUMP: "none", OUTSIDE: "none" }[marker] ?? "id");
    if (marker === "SARDIR") refill();
    await attemptSuggest(marker, content, "Apply");
    await attemptSuggest(marker, content, "Dismiss");
    if (marker === "EDIT") {
      await attemptSuggestUnanswered(marker, content, "accepted");
      await attemptSuggestUnanswered(marker, content, "typed");
    }
  }

  step = "shutdown";
  await request("shutdown", undefined, 8000);
  await notify("exit");
  step = "bridge exit";
  const exited = await Promise.race([bridgeExited, sleep(5000).then(() => null)]);
  if (!exited) fail("the bridge did not exit within 5 s of exit");
  else check(exited.code === 0, `the bridge exited with ${show(exited)} after shutdown+exit, expected code 0`);
}

// ---------------------------------------------------------------------------------------------
// The agent's side of the story.

async function checkAgent() {
  step = "agent log";
  await waitFor(() => agentLog.some((e) => e.event === "exit" || e.event === "stdin-closed"), 3000, "the agent to see its stdin close");
  pollLog();
  const log = agentLog;
  if (!check(log.length > 0, `the agent log ${AGENT_LOG} is empty: the agent never started`)) return;
  for (const e of log.filter((e) => e.issue)) fail(`agent found: ${e.issue} ${show({ ...e, t: undefined, issue: undefined })}`);
  for (const e of log.filter((e) => e.sdkError)) fail(`ACP SDK error: ${show(e.sdkError)}`);
  const msgs = log.filter((e) => e.seq !== undefined).sort((a, b) => a.seq - b.seq);

  step = "agent: initialize";
  const init = msgs.filter((e) => e.method === "initialize");
  if (check(init.length === 1, `expected one initialize, got ${init.length}`)) {
    const nes = init[0].raw?.clientCapabilities?.nes;
    for (const k of ["jump", "rename", "searchAndReplace"]) {
      check(nes && typeof nes[k] === "object" && nes[k] !== null && !Array.isArray(nes[k]),
        `initialize clientCapabilities.nes.${k}: expected an object, got nes = ${show(nes)}`);
    }
  }

  step = "agent: document events";
  for (const e of msgs.filter((e) => e.method === "document/didOpen" || e.method === "document/didChange")) {
    const texts = snapshots.get(keyOf(e.params?.uri));
    const v = e.params?.version;
    if (!check(texts?.has(v), `agent seq ${e.seq} ${e.method}: the editor never had version ${v} of ${e.params?.uri}`)) continue;
    if (e.mirror !== texts.get(v)) fail(`agent seq ${e.seq} ${e.method} v${v} of ${e.params.uri}: the agent's mirror differs from the editor's text: ${diffText(texts.get(v), e.mirror)}; the agent received ${show(e.raw)}`);
  }

  step = "agent: every suggestion ends exactly once";
  const made = new Map();
  for (const s of msgs.filter((e) => e.method === "nes/suggest")) {
    for (const x of s.result?.suggestions ?? []) made.set(x.id, s.seq);
  }
  const counts = { accept: 0, rejected: 0, refused: 0, drop: 0 };
  for (const [id, seq] of made) {
    const ends = msgs.filter((e) => (e.method === "nes/accept" || e.method === "nes/reject") && e.params?.id === id);
    const w = want.get(id) ?? { end: "drop", where: "(not seen by this editor)" };
    counts[w.end]++;
    if (!check(ends.length === 1, `${id} (${w.where}): ended ${ends.length} times: ${show(ends.map((e) => e.raw))}`)) continue;
    const e = ends[0];
    check(e.seq > seq, `${id}: ${e.method} arrived before the suggestion`);
    const reason = e.params?.reason;
    switch (w.end) {
      case "accept":
        check(e.method === "nes/accept", `${id} (${w.where}): expected nes/accept, got ${e.method} ${show(e.raw)}`);
        break;
      case "rejected":
        check(e.method === "nes/reject" && reason === "rejected", `${id} (${w.where}): expected nes/reject "rejected", got ${e.method} ${show(e.raw)}`);
        break;
      case "refused":
        check(e.method === "nes/reject", `${id} (${w.where}): outside the workspace: expected nes/reject, got ${e.method}`);
        break;
      default:
        check(e.method === "nes/reject" && ["replaced", "ignored", "cancelled"].includes(reason),
          `${id} (${w.where}): the editor neither accepted nor rejected it: expected nes/reject replaced/ignored/cancelled, got ${e.method} ${show(e.raw)}`);
    }
  }
  for (const id of want.keys()) check(made.has(id), `${id}: seen by the editor but never made by the agent`);
  note(`${made.size} suggestions: ${counts.accept} accepted, ${counts.rejected} rejected by the editor, ${counts.refused} refused (outside), ${counts.drop} replaced/ignored`);

  note(`code action kinds: ${[...actionKinds].join(", ")}`);
  if (filterless.size) note(`completion items without filterText (the contract lists it): ${[...filterless].join(", ")}`);
  for (const t of [...titleForms].slice(0, 8)) note(`title wording differs from the contract: ${t}`);
  step = "files outside the workspace, skipped files";
  for (const [p, content] of untouchable) check(fs.readFileSync(p).equals(content), `${p} changed`);
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
  console.log(`lsp-kinds-e2e: ${scenario}`);
  for (const n of notes) console.log(`  note: ${n}`);
  for (const { msg, n } of recurring.values()) console.log(`  note: ${msg}${n > 1 ? ` (×${n})` : ""}`);
  if (ok) {
    console.log(`lsp-kinds-e2e: PASS (${lineNo} attempts)`);
  } else {
    console.log(`lsp-kinds-e2e: FAIL (${failures.length})`);
    for (const f of failures) console.log(`  FAIL ${f}`);
    console.log(`  agent log: ${AGENT_LOG}`);
    console.log(`  bridge log: ${BRIDGE_LOG}`);
    if (bridgeStderr.trim()) console.log(`--- bridge stderr (tail) ---\n${tail(bridgeStderr, 30)}`);
    if (fs.existsSync(BRIDGE_LOG)) console.log(`--- bridge log (tail) ---\n${tail(fs.readFileSync(BRIDGE_LOG, "utf8"), 40)}`);
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
  bridge.stdin.end();
  await Promise.race([bridgeExited, sleep(2000)]);
  if (bridgeExit === null) bridge.kill("SIGKILL");
}
try {
  await checkAgent();
} catch (err) {
  fail(`checking the agent log: ${err?.stack ?? err}`);
}
clearTimeout(watchdog);
finish();
