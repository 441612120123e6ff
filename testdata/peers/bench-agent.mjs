// bench-agent.mjs: the leanest Next Edit Suggestions agent the official ACP SDK
// (@agentclientprotocol/sdk, entry point experimental/nes) makes, for e2e
// BenchmarkEndToEndRoundTrip: its own time per request is the SDK's, so that what the bridge adds is
// not hidden behind the agent's work.
//
// Environment:
//   PEERS_NODE_MODULES   node_modules folder holding @agentclientprotocol/sdk (required)
//
// initialize: positionEncoding utf-16, events didOpen and didChange (incremental). nes/suggest
// answers one edit suggestion, a new id each time, that inserts "DONE " at the cursor. Document events, nes/accept and nes/reject are taken and dropped.

import { loadSDK, stdio } from "./agent-kit.mjs";

const { acp } = await loadSDK("bench-agent");

const app = acp.agent({ name: "bench-agent" });
let n = 0;

app.onRequest(acp.methods.agent.initialize, () => ({
  protocolVersion: 1,
  agentCapabilities: {
    positionEncoding: "utf-16",
    nes: { events: { document: { didOpen: {}, didChange: { syncKind: "incremental" } } } },
  },
  agentInfo: { name: "bench-agent", version: "1.0.0" },
  authMethods: [],
}));
app.onRequest(acp.methods.agent.nes.start, () => ({ sessionId: "bench" }));
app.onRequest(acp.methods.agent.nes.close, () => ({}));
app.onRequest(acp.methods.agent.nes.suggest, ({ params }) => {
  const at = params.position;
  return { suggestions: [{ id: `b${++n}`, kind: "edit", uri: params.uri, edits: [{ range: { start: at, end: at }, newText: "DONE " }] }] };
});
app.onNotification("*", () => {});

const { input, output } = stdio({ issue: (text) => process.stderr.write(`bench-agent: ${text}\n`), onIn() {} });
const connection = app.connect(acp.ndJsonStream(output, input));
connection.closed.then(() => process.exit(0));
