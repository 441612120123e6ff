// context-agent.mjs: a Next Edit Suggestions agent written with the official ACP SDK
// (@agentclientprotocol/sdk, entry point experimental/nes) that asks for every nes/suggest context
// key and records what it gets, and that calls the client methods the bridge answers. Used by
// e2e/sdkpeer_context_test.go.
//
// Environment:
//   PEERS_NODE_MODULES     node_modules folder holding @agentclientprotocol/sdk (required)
//   CONTEXT_AGENT_LOG      file to append one JSON object per line to (required)
//   CONTEXT_AGENT_READS    JSON array of absolute paths that fs/read_text_file is also asked for
//                          on an ASK request (optional)
//
// Capabilities: positionEncoding "utf-16" (the encoding of JavaScript strings, so the mirror needs
// no conversion); events didOpen, didChange (incremental), didClose, didFocus; context openFiles,
// recentFiles {maxCount: 2}, editHistory {maxCount: 3}, userActions {maxCount: 5}, diagnostics and
// relatedSnippets.
//
// The agent keeps a mirror of every open document. nes/suggest is answered with no suggestion.
// When the cursor line of a nes/suggest contains "ASK", the agent first calls the client, in this
// order, and logs each result or error: workspace/open_documents, workspace/recent_documents
// {limit: 1}, workspace/active_document, fs/read_text_file of the request's document (the answer
// must be the agent's mirror, which is the editor's buffer), fs/read_text_file of each path of
// CONTEXT_AGENT_READS, and session/request_permission with two options (allow-once "Allow once",
// reject-once "Reject"). The SDK does not check the answers to the agent's own requests, so the
// agent checks those of fs/read_text_file and session/request_permission with the SDK's schemas
// (and its own requests' params too), and the workspace/* answers, which the SDK has no schema
// for, against the shape of the editor-state proposal.
//
// Log lines (every line has "t", the agent's own clock in ms):
//   {"kind":"initialize","raw":R}                         the initialize params, as on the wire
//   {"kind":"notification","seq":N,"method":M,"params":P,"raw":R}
//                        a notification the SDK validated and delivered (P), with its wire form (R)
//   {"kind":"suggest","seq":N,"params":P,"raw":R,"mirror":TEXT,"ask":BOOL}
//                        a nes/suggest as the SDK's handler received it (P, validated with
//                        zSuggestNesRequest) and as it was on the wire (R); mirror is the agent's
//                        text of the document at that moment
//   {"kind":"client","method":M,"params":P,"result":X} | {...,"error":{code,message,data}}
//                        a request of this agent to the client and its answer
//   {"sdkError":...}     something the SDK reported or rejected: a message that failed validation
//                        (with the schema issues), an error response the SDK sent, an answer that
//                        fails the SDK's schema, or a wire value the SDK's parse silently dropped
//                        (a field whose schema falls back to undefined on error)
//   {"issue":TEXT,...}   something this agent found wrong in what it received
//   {"event":"start"|"stdin-closed"|"exit"}
//
// Ordering: the SDK dispatches every incoming message without waiting for the previous one, and a
// request can overtake the notifications before it. A wire tap therefore numbers the messages as
// they come off stdin, and a nes/suggest waits until every document notification before it on the
// wire was applied to the mirror (or rejected by the SDK).

import { fileURLToPath } from "node:url";
import { loadSDK, jsonEnv, jsonLog, stdio } from "./agent-kit.mjs";

const LOG = process.env.CONTEXT_AGENT_LOG || "";
if (!process.env.PEERS_NODE_MODULES || !LOG) {
  process.stderr.write("context-agent: PEERS_NODE_MODULES and CONTEXT_AGENT_LOG must be set\n");
  process.exit(2);
}
const { acp, core } = await loadSDK("context-agent", { core: true });

const READS = jsonEnv("context-agent", "CONTEXT_AGENT_READS");

const { log, issue } = jsonLog("context-agent", LOG);
log({ event: "start", pid: process.pid });

// ---------------------------------------------------------------------------------------------
// The mirror (utf-16 positions index JavaScript strings directly).

const docs = new Map(); // uri -> {text, version}
const sessions = new Set();
let nextSession = 0;

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13 && text.charCodeAt(i + 1) === 10) i++;
    if (c === 10 || c === 13) starts.push(i + 1);
  }
  return starts;
}

// The string index of a utf-16 position, or -1 when it is not in the text.
function indexOf(text, pos) {
  const starts = lineStarts(text);
  if (pos.line >= starts.length) return -1;
  const next = pos.line + 1 < starts.length ? starts[pos.line + 1] : text.length;
  const i = starts[pos.line] + pos.character;
  return i <= next ? i : -1;
}

function lineAt(text, line) {
  const starts = lineStarts(text);
  if (line >= starts.length) return "";
  const end = line + 1 < starts.length ? starts[line + 1] : text.length;
  return text.slice(starts[line], end).replace(/\r?\n$|\r$/, "");
}

function applyDocument(method, p) {
  const doc = docs.get(p.uri);
  switch (method) {
    case "document/didOpen":
      if (doc) issue(`didOpen of ${p.uri}, which is open`);
      docs.set(p.uri, { text: p.text, version: p.version });
      break;
    case "document/didChange": {
      if (!doc) {
        issue(`didChange of ${p.uri}, which is not open`);
        return;
      }
      if (!(p.version > doc.version)) issue(`didChange version ${p.version} not after ${doc.version}`, { uri: p.uri });
      for (const c of p.contentChanges) {
        if (c.range == null) {
          issue("a full-text change, though the agent asked for incremental sync", { uri: p.uri });
          doc.text = c.text;
          continue;
        }
        const a = indexOf(doc.text, c.range.start);
        const b = indexOf(doc.text, c.range.end);
        if (a < 0 || b < a) {
          issue("didChange range not in the mirror", { uri: p.uri, range: c.range });
          continue;
        }
        doc.text = doc.text.slice(0, a) + c.text + doc.text.slice(b);
      }
      doc.version = p.version;
      break;
    }
    case "document/didClose":
      if (!doc) issue(`didClose of ${p.uri}, which is not open`);
      docs.delete(p.uri);
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// The wire tap.

const DOCUMENT = new Set(["document/didOpen", "document/didChange", "document/didClose"]);
const NOTIFICATIONS = {
  "document/didOpen": acp.validate.zDidOpenDocumentNotification,
  "document/didChange": acp.validate.zDidChangeDocumentNotification,
  "document/didClose": acp.validate.zDidCloseDocumentNotification,
  "document/didSave": acp.validate.zDidSaveDocumentNotification,
  "document/didFocus": acp.validate.zDidFocusDocumentNotification,
  "nes/accept": acp.validate.zAcceptNesNotification,
  "nes/reject": acp.validate.zRejectNesNotification,
};

let seq = 0;
const pending = new Map(); // method -> queue of {seq, raw} seen on the wire, not yet delivered
const requests = new Map(); // JSON id -> {seq, raw, documentsBefore}
let documentsOnWire = 0; // document notifications read so far
let documentsDone = 0; // ... applied or rejected by the SDK
let waiters = [];

// tapIn records each message read from stdin, before the SDK gets it.
function tapIn(msg) {
  seq++;
  if (msg === null || typeof msg !== "object" || typeof msg.method !== "string") return;
  if ("id" in msg) {
    requests.set(JSON.stringify(msg.id), { seq, raw: msg.params, documentsBefore: documentsOnWire });
    return;
  }
  if (DOCUMENT.has(msg.method)) documentsOnWire++;
  if (!pending.has(msg.method)) pending.set(msg.method, []);
  pending.get(msg.method).push({ seq, raw: msg.params });
}

function delivered(method) {
  const entry = pending.get(method)?.shift();
  if (!entry) issue(`the SDK delivered a ${method} that the wire tap did not see`);
  if (DOCUMENT.has(method)) {
    documentsDone++;
    const ready = waiters.filter((w) => w.count <= documentsDone);
    waiters = waiters.filter((w) => w.count > documentsDone);
    for (const w of ready) w.resolve();
  }
  return entry ?? { seq: -1, raw: undefined };
}

function documentsApplied(count) {
  if (count <= documentsDone) return Promise.resolve();
  return new Promise((resolve) => waiters.push({ count, resolve }));
}

// The SDK reports a notification it rejected only through console.error("Error handling
// notification", {method, ...}); record it with the schema's issues, and let the queue move on.
const consoleError = console.error.bind(console);
console.error = (...args) => {
  const info = args[1] && typeof args[1] === "object" ? args[1] : undefined;
  const record = { console: String(args[0]), info };
  if (args[0] === "Error handling notification" && info && NOTIFICATIONS[info.method]) {
    const entry = delivered(info.method);
    const r = NOTIFICATIONS[info.method].safeParse(entry.raw);
    Object.assign(record, { seq: entry.seq, raw: entry.raw, issues: r.success ? "(the schema accepts it; the handler failed)" : r.error.issues });
  }
  log({ sdkError: record });
  consoleError(...args);
};

// dropped lists the places where the wire had a value and the SDK's parse has none or another
// one: the schema's fallback on error (defaultOnError) replaced an invalid value by undefined.
function dropped(raw, parsed, at = "") {
  if (raw === null || raw === undefined) return [];
  if (typeof raw !== "object") return Object.is(raw, parsed) ? [] : [{ at, raw, parsed: parsed ?? null }];
  if (parsed === null || typeof parsed !== "object" || Array.isArray(raw) !== Array.isArray(parsed)) {
    return [{ at, raw, parsed: parsed ?? null }];
  }
  const out = [];
  for (const k of Object.keys(raw)) out.push(...dropped(raw[k], parsed[k], `${at}/${k}`));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Calls to the client.

function refsProblem(v, many) {
  const ok = (d) => d && typeof d === "object" && typeof d.uri === "string" && d.uri.startsWith("file:///") && typeof d.languageId === "string";
  if (many) return v && Array.isArray(v.documents) && v.documents.every(ok) ? null : "want {documents: [{uri: file:///…, languageId}]}";
  return v && "document" in v && (v.document === null || ok(v.document)) ? null : "want {document: {uri: file:///…, languageId} | null}";
}

async function callClient(client, method, params, check) {
  const entry = { kind: "client", method, params };
  try {
    entry.result = await client.request(method, params);
    const problem = check(entry.result);
    if (problem) log({ sdkError: { answer: method, result: entry.result, problem } });
  } catch (err) {
    entry.error = { code: err?.code ?? null, message: String(err?.message ?? err), data: err?.data ?? null };
  }
  log(entry);
  return entry;
}

function schemaCheck(schema) {
  return (v) => {
    const r = schema.safeParse(v);
    return r.success ? null : r.error.issues;
  };
}

function ownParams(schema, method, params) {
  const r = schema.safeParse(params);
  if (!r.success) issue(`this agent's own ${method} params fail the SDK's schema`, { params, issues: r.error.issues });
}

async function askTheClient(client, p, mirror) {
  const sessionId = p.sessionId;
  await callClient(client, "workspace/open_documents", { sessionId }, (v) => refsProblem(v, true));
  await callClient(client, "workspace/recent_documents", { sessionId, limit: 1 }, (v) => refsProblem(v, true));
  await callClient(client, "workspace/active_document", { sessionId }, (v) => refsProblem(v, false));
  const paths = [fileURLToPath(p.uri), ...READS];
  for (const [i, file] of paths.entries()) {
    const params = { sessionId, path: file };
    ownParams(core.zReadTextFileRequest, "fs/read_text_file", params);
    const r = await callClient(client, "fs/read_text_file", params, schemaCheck(core.zReadTextFileResponse));
    if (i === 0 && r.result && r.result.content !== mirror) {
      issue("fs/read_text_file of the request's document is not the text the document events gave", { content: r.result.content, mirror });
    }
  }
  const permission = {
    sessionId,
    toolCall: { toolCallId: "context-agent-read", title: "Read the workspace", kind: "read", status: "pending" },
    options: [
      { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
      { optionId: "reject-once", name: "Reject", kind: "reject_once" },
    ],
  };
  ownParams(core.zRequestPermissionRequest, "session/request_permission", permission);
  await callClient(client, "session/request_permission", permission, schemaCheck(core.zRequestPermissionResponse));
}

// ---------------------------------------------------------------------------------------------
// The SDK app.

const app = acp.agent({ name: "context-test-agent" });

app.onRequest(acp.methods.agent.initialize, (ctx) => {
  const info = requests.get(JSON.stringify(ctx.requestId));
  log({ kind: "initialize", raw: info?.raw ?? null });
  if (!(ctx.params.clientCapabilities?.positionEncodings ?? []).includes("utf-16")) {
    issue("the client did not offer utf-16", { offered: ctx.params.clientCapabilities?.positionEncodings });
  }
  return {
    protocolVersion: 1,
    agentCapabilities: {
      positionEncoding: "utf-16",
      nes: {
        events: { document: { didOpen: {}, didChange: { syncKind: "incremental" }, didClose: {}, didFocus: {} } },
        context: {
          openFiles: {},
          recentFiles: { maxCount: 2 },
          editHistory: { maxCount: 3 },
          userActions: { maxCount: 5 },
          diagnostics: {},
          relatedSnippets: {},
        },
      },
    },
    agentInfo: { name: "context-test-agent", version: "0.1.0" },
    authMethods: [],
  };
});

app.onRequest(acp.methods.agent.nes.start, () => {
  const sessionId = `context-session-${++nextSession}`;
  sessions.add(sessionId);
  return { sessionId };
});

app.onRequest(acp.methods.agent.nes.close, (ctx) => {
  if (!sessions.delete(ctx.params.sessionId)) issue(`nes/close of unknown session ${ctx.params.sessionId}`);
  log({ kind: "close", params: ctx.params });
  return {};
});

app.onRequest(acp.methods.agent.nes.suggest, async (ctx) => {
  const info = requests.get(JSON.stringify(ctx.requestId)) ?? { seq: -1, raw: undefined, documentsBefore: 0 };
  await documentsApplied(info.documentsBefore);
  const p = ctx.params;
  if (!sessions.has(p.sessionId)) issue(`nes/suggest for unknown session ${p.sessionId}`);
  for (const d of dropped(info.raw, p)) log({ sdkError: { dropped: d, method: "nes/suggest", seq: info.seq } });
  const doc = docs.get(p.uri);
  if (!doc) issue(`nes/suggest for ${p.uri}, which is not open`);
  else if (doc.version !== p.version) issue(`nes/suggest version ${p.version}, but the mirror is at ${doc.version}`);
  const mirror = doc ? doc.text : null;
  const ask = mirror !== null && lineAt(mirror, p.position.line).includes("ASK");
  log({ kind: "suggest", seq: info.seq, params: p, raw: info.raw, mirror, ask });
  if (ask) await askTheClient(ctx.client, p, mirror);
  return { suggestions: [] };
});

for (const method of Object.keys(NOTIFICATIONS)) {
  app.onNotification(method, (ctx) => {
    const entry = delivered(method);
    if (DOCUMENT.has(method)) applyDocument(method, ctx.params);
    for (const d of dropped(entry.raw, ctx.params)) log({ sdkError: { dropped: d, method, seq: entry.seq } });
    log({ kind: "notification", seq: entry.seq, method, params: ctx.params, raw: entry.raw });
  });
}
app.onNotification("*", () => {});

// ---------------------------------------------------------------------------------------------
// Streams: stdin through the tap; stdout through a tap that records the error responses the SDK
// sends (a request whose params failed validation gets one).

const { input, output } = stdio({
  issue,
  onIn: tapIn,
  onOut(msg) {
    if (msg && msg.error && "id" in msg && !("method" in msg)) {
      const req = requests.get(JSON.stringify(msg.id));
      log({ sdkError: { response: msg, seq: req?.seq, raw: req?.raw } });
    }
  },
  onEnd: () => log({ event: "stdin-closed" }),
});

const connection = app.connect(acp.ndJsonStream(output, input));
connection.closed.then(() => {
  log({ event: "exit" });
  process.exit(0);
});
