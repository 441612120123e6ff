// nes-v2-agent.mjs: a Next Edit Suggestions agent written with the official ACP SDK
// (@agentclientprotocol/sdk, entry point experimental/nes) that speaks the protocol version 2 draft
// of NES: it answers initialize with protocolVersion 2, names its suggestions "suggestionId"
// (version 1: "id"), and uses a suggestion kind the bridge does not know (the kinds are an open
// enum there). Used by e2e/nes_v2_test.go.
//
// Environment:
//   PEERS_NODE_MODULES   node_modules folder holding @agentclientprotocol/sdk (required)
//   V2_AGENT_LOG         file to append one JSON object per line to (required)
//
// Capabilities: positionEncoding "utf-16"; events didOpen and didChange (full sync). The agent
// keeps the text of every open document. nes/suggest, when the cursor line holds "TODO", answers
// two suggestions: {suggestionId: "v2-edit", kind: "edit"} that replaces that "TODO" with "DONE",
// and {suggestionId: "v2-note", kind: "explanation", text} of a kind version 1 does not have.
//
// The SDK's NES entry point checks incoming notifications against version 1's schema, so a
// version 2 nes/accept or nes/reject would not reach a handler: the agent reads them, and the
// document events, from a tap on stdin, as they are on the wire.
//
// Log lines (every line has "t", the agent's own clock in ms):
//   {"method":M,"params":P}   every notification as on the wire
//   {"kind":"suggest","params":P,"result":R}
//   {"issue":TEXT,...}        something this agent found wrong
//   {"event":"start"|"exit"}

import { loadSDK, jsonLog, stdio } from "./agent-kit.mjs";

const { acp } = await loadSDK("nes-v2-agent");
const LOG = process.env.V2_AGENT_LOG || "";
if (!LOG) {
  process.stderr.write("nes-v2-agent: V2_AGENT_LOG is not set\n");
  process.exit(2);
}
const { log, issue } = jsonLog("nes-v2-agent", LOG);
log({ event: "start", pid: process.pid });

const docs = new Map(); // uri -> text
const made = new Set(); // suggestion ids not ended yet

// A version 2 nes/accept or nes/reject names one live suggestion by suggestionId, and has no id.
function checkEnd(method, params) {
  if (params?.id !== undefined) issue(`${method} carries version 1's id`, { params });
  const id = params?.suggestionId;
  if (typeof id !== "string") return issue(`${method} without a suggestionId`, { params });
  if (!made.delete(id)) issue(`${method} for ${id}, which is not a live suggestion`, { params });
}

function onWire(msg) {
  if (msg === null || typeof msg !== "object" || typeof msg.method !== "string" || "id" in msg) return;
  const p = msg.params ?? {};
  log({ method: msg.method, params: p });
  switch (msg.method) {
    case "document/didOpen":
      docs.set(p.uri, p.text);
      break;
    case "document/didChange":
      for (const c of p.contentChanges ?? []) {
        if (c.range) issue("an incremental change; this agent asked for full sync", { change: c });
        else docs.set(p.uri, c.text);
      }
      break;
    case "nes/accept":
    case "nes/reject":
      checkEnd(msg.method, p);
      break;
  }
}

const app = acp.agent({ name: "nes-v2-agent" });

app.onRequest(acp.methods.agent.initialize, () => ({
  protocolVersion: 2,
  agentCapabilities: {
    positionEncoding: "utf-16",
    nes: { events: { document: { didOpen: {}, didChange: { syncKind: "full" } } } },
  },
  agentInfo: { name: "nes-v2-agent", version: "2.0.0" },
  authMethods: [],
}));

app.onRequest(acp.methods.agent.nes.start, () => ({ sessionId: "v2-session" }));
app.onRequest(acp.methods.agent.nes.close, () => ({}));

app.onRequest(acp.methods.agent.nes.suggest, ({ params }) => {
  const text = docs.get(params.uri);
  const line = text === undefined ? undefined : text.split("\n")[params.position.line];
  const at = line === undefined ? -1 : line.indexOf("TODO");
  const suggestions = [];
  if (at >= 0) {
    const range = { start: { line: params.position.line, character: at }, end: { line: params.position.line, character: at + 4 } };
    suggestions.push(
      { suggestionId: "v2-edit", kind: "edit", uri: params.uri, edits: [{ range, newText: "DONE" }] },
      { suggestionId: "v2-note", kind: "explanation", uri: params.uri, text: "TODO is done" },
    );
  }
  for (const s of suggestions) made.add(s.suggestionId);
  const result = { suggestions };
  log({ kind: "suggest", params, result });
  return result;
});

// Every notification is read from the wire (onWire); the SDK's own checks would drop version 2's.
app.onNotification("*", () => {});

const { input, output } = stdio({ issue, onIn: onWire });
const connection = app.connect(acp.ndJsonStream(output, input));
connection.closed.then(() => {
  log({ event: "exit" });
  process.exit(0);
});
