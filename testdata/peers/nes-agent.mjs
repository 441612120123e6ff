// nes-agent.mjs: a Next Edit Suggestions agent written with the official ACP SDK
// (@agentclientprotocol/sdk, entry point experimental/nes), used as a test peer for the bridge.
//
// Environment:
//   PEERS_NODE_MODULES   node_modules folder holding @agentclientprotocol/sdk (required)
//   NES_AGENT_SYNC       "incremental" (default) or "full": the didChange syncKind it asks for
//   NES_AGENT_ENCODING   "utf-16" (default), "utf-8" or "utf-32": the position encoding it picks;
//                        it must be one the client offered (otherwise an issue is logged and
//                        utf-16 is used, the protocol default)
//   NES_AGENT_LOG        file to append one JSON object per line to (optional)
//   NES_AGENT_DELAY_MS   how long each nes/suggest takes before it is answered (default 0), as an
//                        agent that starts a CLI or a large model per suggestion does
//   NES_AGENT_KINDS      "1": answer with every suggestion kind (see "Kinds mode" below) instead of
//                        the TODO rule; the agent then also asks for document/didFocus and the
//                        diagnostics context, and checks that initialize's clientCapabilities.nes
//                        advertises jump, rename and searchAndReplace
//
// The agent keeps a mirror of every open document, applying document/didOpen and
// document/didChange (ranges in its own encoding). nes/suggest: when the cursor line contains
// "TODO", it returns one edit suggestion that replaces that "TODO" with "DONE ✓" and, when the
// line also contains "ça", the first "ça" with "ça va"; otherwise no suggestion.
//
// Kinds mode (NES_AGENT_KINDS=1): nes/suggest looks for a marker word on the cursor line and
// answers (positions in the agent's encoding, ids "<MARKER>-<n>-<label>"):
//   EDIT     one edit of this document: the first "old" on the line -> "fresh", the first "😀" ->
//            "🎉🎉", and "\t// ✓ edited\n" inserted at the start of the next line
//   OTHER [REL]  an edit of another workspace file (REL, default src/util.go; its text is the
//            mirror when open, the disk otherwise): "é🎉" inserted after its first "𐐀" (or at 0:0),
//            cursorPosition just after the insertion
//   JUMP     a jump to src/util.go, at its first "ping" (or 0:0)
//   RENAME IDENT NEW  a rename of the first whole-word IDENT on the line (position 2 characters
//            into it) to NEW
//   SAR      searchAndReplace in this document: literal "(ça)+" -> "$1 ✓"
//   SARDIR   searchAndReplace over the workspace folder: regex "tmp_\d+" -> "slot"
//   OUTSIDE  four searchAndReplace suggestions ("secret" -> "LEAKED") outside the workspace: a
//            sibling folder sharing the workspace's name as a prefix, "<root>/../outside.txt",
//            the parent folder "<root>/..", and "<root>/leak.txt" (the client makes it a symlink
//            to a file outside)
//   OUTOPEN  a searchAndReplace ("secret" -> "LEAKED") of the open document named outside.txt
//            that lies outside the workspace, under the uri its document/didOpen carried
//   MIX [IDENT NEW]  an edit (first "old" -> "fresh✓", cursorPosition after it), the JUMP, the
//            RENAME, the SAR and the sibling OUTSIDE suggestion at once
// Every answer is checked against the SDK's zSuggestNesResponse before it is sent, and every
// nes/accept or nes/reject must name a suggestion this agent made that has not ended yet.
//
// Log lines (every line has "t", the agent's own clock in ms):
//   {"seq":N,"kind":"notification","method":M,"params":P,"raw":R[,"version":V,"mirror":TEXT|null]}
//       a notification, logged in wire order once the SDK validated it (P is what the SDK's
//       handler received, R what was on the wire); document events carry the mirror after them
//   {"seq":N,"kind":"request","method":M,"id":I,"params":P,"raw":R,"result":X}
//   {"seq":N,"kind":"wire","method":M,"raw":R}           a notification without an SDK handler
//   {"sdkError":...}      something the SDK reported: a notification that failed validation
//                         (with the schema issues), an error response the SDK sent, an invalid message
//   {"issue":TEXT,...}    something this agent found wrong in what it received
//   {"event":"start"|"stdin-closed",...}
//
// Why the wire tap: the SDK dispatches each incoming message through its chain of handlers,
// one await per handler, without waiting for the previous message; a notification whose
// handler was registered earlier overtakes one registered later when both arrive in the same
// read (for example document/didSave, document/didChange, nes/reject arrive in one chunk and
// the handlers run reject, didChange, didSave). The agent therefore numbers messages as they
// come off stdin, and applies the SDK-validated notifications strictly in that order.

import { fileURLToPath } from "node:url";
import fs from "node:fs";
import { loadSDK, jsonLog, stdio } from "./agent-kit.mjs";

const { acp } = await loadSDK("nes-agent");

const SYNC = process.env.NES_AGENT_SYNC || "incremental";
const WANT_ENCODING = process.env.NES_AGENT_ENCODING || "utf-16";
const LOG = process.env.NES_AGENT_LOG || "";
const KINDS = process.env.NES_AGENT_KINDS === "1";
const DELAY_MS = Number(process.env.NES_AGENT_DELAY_MS || "0");
const ENCODINGS = ["utf-8", "utf-16", "utf-32"];

const { log, issue } = jsonLog("nes-agent", LOG);

if (!["incremental", "full"].includes(SYNC)) issue(`bad NES_AGENT_SYNC ${SYNC}`);
if (!ENCODINGS.includes(WANT_ENCODING)) issue(`bad NES_AGENT_ENCODING ${WANT_ENCODING}`);
log({ event: "start", pid: process.pid, sync: SYNC, encoding: WANT_ENCODING, kinds: KINDS });

// ---------------------------------------------------------------------------------------------
// Positions. A position is (line, character) where character counts units of the negotiated
// encoding; lines end at \n, \r\n or \r. Text is held as a JS string (UTF-16); the functions
// below walk code points and convert between positions and string indices.

let encoding = "utf-16"; // set by initialize
const clientKinds = new Set(); // the suggestion kinds initialize's clientCapabilities.nes advertised

function unitWidth(cp, enc) {
  if (enc === "utf-32") return 1;
  if (enc === "utf-16") return cp > 0xffff ? 2 : 1;
  // utf-8 (a lone surrogate counts as the 3 bytes WTF-8 would give it)
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp < 0x10000) return 3;
  return 4;
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    } else if (c === 10) {
      starts.push(i + 1);
    }
  }
  return starts;
}

// Index just past the last character of the line, before its terminator.
function lineContentEnd(text, starts, line) {
  if (line + 1 >= starts.length) return text.length;
  let e = starts[line + 1];
  if (text.charCodeAt(e - 1) === 10) {
    e--;
    if (e > starts[line] && text.charCodeAt(e - 1) === 13) e--;
  } else if (text.charCodeAt(e - 1) === 13) {
    e--;
  }
  return e;
}

// Position -> string index. Problems (a column inside a character, past the end of the line,
// a line past the end) are reported through `problems` and resolved the LSP way: round down,
// clamp to the end of the line / document.
function positionToIndex(text, pos, enc, problems, what) {
  const starts = lineStarts(text);
  if (pos.line >= starts.length) {
    if (!(pos.line === starts.length && pos.character === 0)) {
      problems.push(`${what}: line ${pos.line} past the last line ${starts.length - 1}`);
    }
    return text.length;
  }
  const end = lineContentEnd(text, starts, pos.line);
  let i = starts[pos.line];
  let units = 0;
  while (i < end && units < pos.character) {
    const cp = text.codePointAt(i);
    const w = unitWidth(cp, enc);
    if (units + w > pos.character) {
      problems.push(`${what}: ${enc} column ${pos.character} of line ${pos.line} falls inside U+${cp.toString(16).toUpperCase()}`);
      break;
    }
    units += w;
    i += cp > 0xffff ? 2 : 1;
  }
  if (units < pos.character && i >= end) {
    problems.push(`${what}: ${enc} column ${pos.character} past the end of line ${pos.line} (length ${units})`);
  }
  return i;
}

// String index -> position (index must be on a code point boundary).
function indexToPosition(text, index, enc) {
  const starts = lineStarts(text);
  let line = 0;
  while (line + 1 < starts.length && starts[line + 1] <= index) line++;
  let character = 0;
  for (let i = starts[line]; i < index; ) {
    const cp = text.codePointAt(i);
    character += unitWidth(cp, enc);
    i += cp > 0xffff ? 2 : 1;
  }
  return { line, character };
}

// ---------------------------------------------------------------------------------------------
// State.

const docs = new Map(); // uri -> {text, version, languageId}
const sessions = new Set();
let nextSession = 0;
let nextSuggestion = 0;

function checkSession(method, params) {
  if (!sessions.has(params.sessionId)) {
    issue(`${method}: unknown or closed sessionId ${JSON.stringify(params.sessionId)}`);
  }
}

function applyDocumentEvent(method, params) {
  const problems = [];
  let doc = docs.get(params.uri);
  switch (method) {
    case "document/didOpen":
      if (doc) problems.push(`didOpen of ${params.uri} which is already open`);
      doc = { text: params.text, version: params.version, languageId: params.languageId };
      docs.set(params.uri, doc);
      break;
    case "document/didChange": {
      if (!doc) {
        problems.push(`didChange of ${params.uri} which is not open`);
        break;
      }
      if (!(params.version > doc.version)) {
        problems.push(`didChange version ${params.version} not after ${doc.version}`);
      }
      if (SYNC === "full") {
        if (params.contentChanges.length !== 1 || params.contentChanges[0].range != null) {
          problems.push(`full sync asked for, but didChange carried ${params.contentChanges.length} change(s), ranges: ${JSON.stringify(params.contentChanges.map((c) => c.range ?? null))}`);
        }
      }
      let text = doc.text;
      params.contentChanges.forEach((change, k) => {
        if (change.range == null) {
          text = change.text;
          return;
        }
        const start = positionToIndex(text, change.range.start, encoding, problems, `change ${k} start`);
        const end = positionToIndex(text, change.range.end, encoding, problems, `change ${k} end`);
        if (end < start) {
          problems.push(`change ${k}: range end before start ${JSON.stringify(change.range)}`);
          return;
        }
        text = text.slice(0, start) + change.text + text.slice(end);
      });
      doc.text = text;
      doc.version = params.version;
      break;
    }
    case "document/didSave":
      if (!doc) problems.push(`didSave of ${params.uri} which is not open`);
      break;
    case "document/didClose":
      if (!doc) problems.push(`didClose of ${params.uri} which is not open`);
      docs.delete(params.uri);
      doc = undefined;
      break;
  }
  for (const p of problems) issue(p, { method, uri: params.uri });
  return doc;
}

function suggest(params) {
  const doc = docs.get(params.uri);
  if (!doc) {
    issue(`nes/suggest for ${params.uri} which is not open`);
    return { suggestions: [] };
  }
  if (doc.version !== params.version) {
    issue(`nes/suggest version ${params.version} but the mirror is at version ${doc.version}`, { uri: params.uri });
  }
  const problems = [];
  const text = doc.text;
  positionToIndex(text, params.position, encoding, problems, "suggest position");
  for (const p of problems) issue(p, { method: "nes/suggest" });
  if (KINDS) {
    const result = { suggestions: kindsSuggest(params, text) };
    const r = acp.validate.zSuggestNesResponse.safeParse(result);
    if (!r.success) issue("this agent's own nes/suggest answer fails the SDK's schema", { result, issues: r.error.issues });
    for (const s of result.suggestions) {
      if (s.kind !== "edit" && !clientKinds.has(s.kind)) issue(`suggested a ${s.kind}, which the client did not advertise`);
      if (made.has(s.id)) issue(`suggestion id ${s.id} made twice`);
      made.set(s.id, "live");
    }
    return result;
  }
  const starts = lineStarts(text);
  if (params.position.line >= starts.length) return { suggestions: [] };
  const lineStart = starts[params.position.line];
  const lineText = text.slice(lineStart, lineContentEnd(text, starts, params.position.line));
  const todo = lineText.indexOf("TODO");
  if (todo < 0) return { suggestions: [] };
  const range = (from, to) => ({
    start: indexToPosition(text, lineStart + from, encoding),
    end: indexToPosition(text, lineStart + to, encoding),
  });
  const edits = [];
  const ca = lineText.indexOf("\u00e7a");
  if (ca >= 0) edits.push({ range: range(ca, ca + 2), newText: "\u00e7a va" });
  edits.push({ range: range(todo, todo + 4), newText: "DONE \u2713" });
  edits.sort((a, b) => a.range.start.character - b.range.start.character);
  nextSuggestion++;
  return {
    suggestions: [{ id: `s${nextSuggestion}`, kind: "edit", uri: params.uri, edits }],
  };
}

// ---------------------------------------------------------------------------------------------
// Kinds mode.

let workspaceUri = null; // from nes/start: workspaceUri, else the first workspace folder
const made = new Map(); // suggestion id -> "live" | "accepted" | "rejected:<reason>"

const sameUri = (a, b) => a === b || (typeof a === "string" && typeof b === "string" && decodeURIComponent(a) === decodeURIComponent(b));
const rootBase = () => (workspaceUri.endsWith("/") ? workspaceUri : workspaceUri + "/");
const rootNoSlash = () => workspaceUri.replace(/\/+$/, "");

// The text of a workspace file as the agent knows it: the mirror when open, the disk otherwise.
function textOfUri(uri) {
  for (const [u, d] of docs) if (sameUri(u, uri)) return d.text;
  try {
    return fs.readFileSync(fileURLToPath(uri), "utf8");
  } catch (err) {
    issue(`cannot read ${uri}: ${err.message}`);
    return "";
  }
}

const isWordChar = (c) => c !== undefined && /[A-Za-z0-9_]/.test(c);

function kindsSuggest(params, text) {
  const starts = lineStarts(text);
  const line = params.position.line;
  if (line >= starts.length) return [];
  const lineStart = starts[line];
  const lineText = text.slice(lineStart, lineContentEnd(text, starts, line));
  const m = /\b(SARDIR|SAR|OUTSIDE|OUTOPEN|OTHER|JUMP|RENAME|EDIT|MIX)\b/.exec(lineText);
  if (!m) return [];
  if (!workspaceUri) {
    issue("nes/suggest in kinds mode before nes/start gave a workspace");
    return [];
  }
  const marker = m[1];
  const args = lineText.slice(m.index + marker.length).trim().split(/\s+/).filter(Boolean);
  const n = ++nextSuggestion;
  const id = (label) => `${marker}-${n}-${label}`;
  const at = (i) => indexToPosition(text, lineStart + i, encoding);
  const util = new URL("src/util.go", rootBase()).href;

  const edit = () => {
    const edits = [];
    const old = lineText.indexOf("old");
    if (old >= 0) edits.push({ range: { start: at(old), end: at(old + 3) }, newText: "fresh" });
    const smile = lineText.indexOf("\u{1F600}");
    if (smile >= 0) edits.push({ range: { start: at(smile), end: at(smile + 2) }, newText: "\u{1F389}\u{1F389}" });
    if (line + 1 < starts.length) {
      const next = indexToPosition(text, starts[line + 1], encoding);
      edits.push({ range: { start: next, end: next }, newText: "\t// \u2713 edited\n" });
    }
    return { id: id("edit"), kind: "edit", uri: params.uri, edits };
  };
  const other = () => {
    const uri = new URL(args[0] || "src/util.go", rootBase()).href;
    const t = textOfUri(uri);
    const i = t.indexOf("\u{10400}");
    const where = i < 0 ? 0 : i + 2;
    const pos = indexToPosition(t, where, encoding);
    const inserted = "\u00e9\u{1F389}";
    const after = t.slice(0, where) + inserted + t.slice(where);
    return {
      id: id("other"),
      kind: "edit",
      uri,
      edits: [{ range: { start: pos, end: pos }, newText: inserted }],
      cursorPosition: indexToPosition(after, where + inserted.length, encoding),
    };
  };
  const jump = () => {
    const t = textOfUri(util);
    const i = t.indexOf("ping");
    return { id: id("jump"), kind: "jump", uri: util, position: indexToPosition(t, Math.max(i, 0), encoding) };
  };
  const rename = (ident, newName) => {
    if (!ident || !newName) {
      issue(`${marker} without IDENT NEW on the line`, { line: lineText });
      return null;
    }
    let i = -1;
    for (let k = lineText.indexOf(ident); k >= 0 && k < m.index; k = lineText.indexOf(ident, k + 1)) {
      if (!isWordChar(lineText[k - 1]) && !isWordChar(lineText[k + ident.length])) {
        i = k;
        break;
      }
    }
    if (i < 0) {
      issue(`${marker}: no whole-word ${ident} before the marker`, { line: lineText });
      return null;
    }
    return { id: id("rename"), kind: "rename", uri: params.uri, position: at(i + Math.min(2, ident.length - 1)), newName };
  };
  const sar = () => ({ id: id("sar"), kind: "searchAndReplace", uri: params.uri, search: "(\u00e7a)+", replace: "$1 \u2713", isRegex: false });
  const outside = (label, uri) => ({ id: id(`outside.${label}`), kind: "searchAndReplace", uri, search: "secret", replace: "LEAKED", isRegex: false });
  const sibling = () => outside("sibling", `${rootNoSlash()}2/outside.txt`);

  switch (marker) {
    case "EDIT":
      return [edit()];
    case "OTHER":
      return [other()];
    case "JUMP":
      return [jump()];
    case "RENAME":
      return [rename(args[0], args[1])].filter(Boolean);
    case "SAR":
      return [sar()];
    case "SARDIR":
      return [{ id: id("sardir"), kind: "searchAndReplace", uri: workspaceUri, search: "tmp_\\d+", replace: "slot", isRegex: true }];
    case "OUTSIDE":
      return [
        sibling(),
        outside("dotdot", `${rootNoSlash()}/../outside.txt`),
        outside("parent", `${rootNoSlash()}/..`),
        outside("link", `${rootNoSlash()}/leak.txt`),
      ];
    case "OUTOPEN": {
      const open = [...docs.keys()].find((u) => u.endsWith("/outside.txt") && !decodeURIComponent(u).startsWith(decodeURIComponent(rootBase())));
      if (!open) {
        issue("OUTOPEN: no open outside.txt outside the workspace");
        return [];
      }
      return [outside("open", open)];
    }
    case "MIX": {
      const out = [];
      const old = lineText.indexOf("old");
      if (old >= 0) {
        const newText = "fresh\u2713";
        const after = text.slice(0, lineStart + old) + newText + text.slice(lineStart + old + 3);
        out.push({
          id: id("edit"),
          kind: "edit",
          uri: params.uri,
          edits: [{ range: { start: at(old), end: at(old + 3) }, newText }],
          cursorPosition: indexToPosition(after, lineStart + old + newText.length, encoding),
        });
      }
      out.push(jump());
      const r = rename(args[0], args[1]);
      if (r) out.push(r);
      out.push(sar(), sibling());
      return out;
    }
  }
  return [];
}

// Records what the SDK delivered for nes/accept and nes/reject against the suggestions made.
function endSuggestion(method, params) {
  if (!KINDS) return;
  const state = made.get(params.id);
  const end = method === "nes/accept" ? "accepted" : `rejected:${params.reason ?? "(no reason)"}`;
  if (state === undefined) issue(`${method} for ${JSON.stringify(params.id)}, which this agent never suggested`);
  else if (state !== "live") issue(`${method} (${end}) for ${params.id}, which already ended (${state})`);
  made.set(params.id, end);
}

// ---------------------------------------------------------------------------------------------
// The wire tap: numbers every message read from stdin, in order, before the SDK sees it.

const ORDERED = new Set([
  "document/didOpen",
  "document/didChange",
  "document/didClose",
  "document/didSave",
  "document/didFocus",
  "nes/accept",
  "nes/reject",
]);
const SCHEMAS = {
  "document/didOpen": acp.validate.zDidOpenDocumentNotification,
  "document/didChange": acp.validate.zDidChangeDocumentNotification,
  "document/didClose": acp.validate.zDidCloseDocumentNotification,
  "document/didSave": acp.validate.zDidSaveDocumentNotification,
  "document/didFocus": acp.validate.zDidFocusDocumentNotification,
  "nes/accept": acp.validate.zAcceptNesNotification,
  "nes/reject": acp.validate.zRejectNesNotification,
};

let seq = 0;
const ordered = []; // ordered notifications in wire order: {seq, method, raw, state, params}
const perMethod = new Map(); // method -> queue of entries not yet seen by the SDK
let drained = 0; // ordered[0..drained) have been applied
let waiters = []; // {count, resolve}
const requests = new Map(); // JSON id -> {seq, method, raw, orderedBefore}

// tapIn records each message read from stdin, before the SDK gets it.
function tapIn(msg) {
  seq++;
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) return;
  if (typeof msg.method === "string" && "id" in msg) {
    requests.set(JSON.stringify(msg.id), { seq, method: msg.method, raw: msg.params, orderedBefore: ordered.length });
  } else if (typeof msg.method === "string") {
    if (ORDERED.has(msg.method)) {
      const entry = { seq, method: msg.method, raw: msg.params, state: "pending" };
      ordered.push(entry);
      if (!perMethod.has(msg.method)) perMethod.set(msg.method, []);
      perMethod.get(msg.method).push(entry);
    } else {
      log({ seq, kind: "wire", method: msg.method, raw: msg.params });
    }
  } else {
    log({ seq, kind: "wire-response", raw: msg });
  }
}

function settle(method, state, params) {
  const queue = perMethod.get(method);
  const entry = queue && queue.shift();
  if (!entry) {
    issue(`SDK delivered ${method} that the wire tap did not see`);
    return;
  }
  entry.state = state;
  entry.params = params;
  drain();
}

function drain() {
  while (drained < ordered.length && ordered[drained].state !== "pending") {
    const e = ordered[drained++];
    if (e.state === "ok") {
      try {
        handleOrdered(e);
      } catch (err) {
        issue(`handler for ${e.method} threw: ${err && err.stack}`);
      }
    }
  }
  const ready = waiters.filter((w) => w.count <= drained);
  waiters = waiters.filter((w) => w.count > drained);
  for (const w of ready) w.resolve();
}

function waitOrdered(count) {
  if (count <= drained) return Promise.resolve();
  return new Promise((resolve) => waiters.push({ count, resolve }));
}

function handleOrdered(e) {
  const { method, params } = e;
  checkSession(method, params);
  if (method.startsWith("document/")) {
    const doc = applyDocumentEvent(method, params);
    log({ seq: e.seq, kind: "notification", method, params, raw: e.raw, version: doc ? doc.version : null, mirror: doc ? doc.text : null });
  } else {
    if (method === "nes/accept" || method === "nes/reject") endSuggestion(method, params);
    log({ seq: e.seq, kind: "notification", method, params, raw: e.raw });
  }
}

// The SDK reports a notification it could not handle (params that fail its schema) only
// through console.error("Error handling notification", {method, code, message}); nothing goes
// on the wire. Catch that, record the schema issues, and let the ordered queue move on.
const consoleError = console.error.bind(console);
console.error = (...args) => {
  const info = args[1] && typeof args[1] === "object" ? args[1] : undefined;
  const record = { sdkError: { console: String(args[0]), info } };
  if (args[0] === "Error handling notification" && info && ORDERED.has(info.method)) {
    const entry = perMethod.get(info.method)?.[0];
    if (entry) {
      const r = SCHEMAS[info.method].safeParse(entry.raw);
      record.sdkError.seq = entry.seq;
      record.sdkError.raw = entry.raw;
      record.sdkError.issues = r.success ? "(the schema accepts it; the handler failed)" : r.error.issues;
    }
    log(record);
    consoleError(...args);
    settle(info.method, "error");
    return;
  }
  log(record);
  consoleError(...args);
};

// ---------------------------------------------------------------------------------------------
// The SDK app.

function requestInfo(ctx) {
  return requests.get(JSON.stringify(ctx.requestId)) || { seq: -1, raw: undefined, orderedBefore: 0 };
}

async function inOrder(ctx, handler) {
  const info = requestInfo(ctx);
  await waitOrdered(info.orderedBefore);
  let result;
  try {
    result = await handler(ctx.params, info);
  } catch (err) {
    log({ seq: info.seq, kind: "request", method: ctx.method, id: ctx.requestId, params: ctx.params, raw: info.raw, error: String(err) });
    throw err;
  }
  log({ seq: info.seq, kind: "request", method: ctx.method, id: ctx.requestId, params: ctx.params, raw: info.raw, result });
  return result;
}

const app = acp.agent({ name: "nes-test-agent" });

app.onRequest(acp.methods.agent.initialize, (ctx) =>
  inOrder(ctx, (params, info) => {
    const offeredRaw = info.raw?.clientCapabilities?.positionEncodings;
    const offered = params.clientCapabilities?.positionEncodings ?? [];
    if (offered.includes(WANT_ENCODING)) {
      encoding = WANT_ENCODING;
    } else {
      issue(`client did not offer ${WANT_ENCODING}`, { offered: offeredRaw });
      encoding = "utf-16";
    }
    const nesRaw = info.raw?.clientCapabilities?.nes;
    const nesParsed = params.clientCapabilities?.nes;
    for (const kind of ["jump", "rename", "searchAndReplace"]) {
      const raw = nesRaw?.[kind];
      const ok = raw !== null && typeof raw === "object" && !Array.isArray(raw) && nesParsed?.[kind] != null;
      if (ok) clientKinds.add(kind);
      else if (KINDS) issue(`initialize: clientCapabilities.nes.${kind} is not advertised (as an object)`, { nes: nesRaw ?? null });
    }
    const document = { didOpen: {}, didChange: { syncKind: SYNC }, didClose: {}, didSave: {} };
    if (KINDS) document.didFocus = {};
    return {
      protocolVersion: 1,
      agentCapabilities: {
        positionEncoding: encoding,
        nes: KINDS ? { events: { document }, context: { diagnostics: {} } } : { events: { document } },
      },
      agentInfo: { name: "nes-test-agent", version: "0.1.0" },
      authMethods: [],
    };
  }),
);

app.onRequest(acp.methods.agent.nes.start, (ctx) =>
  inOrder(ctx, (params) => {
    workspaceUri = params.workspaceUri ?? params.workspaceFolders?.[0]?.uri ?? null;
    const sessionId = `nes-session-${++nextSession}`;
    sessions.add(sessionId);
    return { sessionId };
  }),
);

app.onRequest(acp.methods.agent.nes.close, (ctx) =>
  inOrder(ctx, (params) => {
    checkSession("nes/close", params);
    sessions.delete(params.sessionId);
    return {};
  }),
);

app.onRequest(acp.methods.agent.nes.suggest, (ctx) =>
  inOrder(ctx, async (params) => {
    checkSession("nes/suggest", params);
    if (DELAY_MS > 0) await new Promise((r) => setTimeout(r, DELAY_MS));
    return suggest(params);
  }),
);

for (const method of ORDERED) {
  app.onNotification(method, (ctx) => settle(method, "ok", ctx.params));
}

// Notifications without a handler (for example $/cancel_request) are logged by the tap.
app.onNotification("*", () => {});

// ---------------------------------------------------------------------------------------------
// Streams: stdin through the tap, stdout through a tap that records error responses.

const { input, output } = stdio({
  issue,
  onIn: tapIn,
  onOut(msg) {
    if (msg && msg.error) {
      const req = requests.get(JSON.stringify(msg.id));
      log({ sdkError: { response: msg, method: req?.method, seq: req?.seq, raw: req?.raw } });
    }
  },
  onEnd: () => log({ event: "stdin-closed" }),
});

const connection = app.connect(acp.ndJsonStream(output, input));
connection.closed.then(() => {
  if (drained < ordered.length) {
    issue(`connection closed with ${ordered.length - drained} notification(s) not handled`, {
      pending: ordered.slice(drained).map((e) => ({ seq: e.seq, method: e.method, state: e.state })),
    });
  }
  log({ event: "exit" });
  process.exit(0);
});
