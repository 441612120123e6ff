// no-nes-agent.mjs: an ACP agent written with the official ACP SDK (@agentclientprotocol/sdk,
// entry point experimental/nes) that initializes fine but cannot give Next Edit Suggestions, the
// way chat agents such as codex-acp behave. A test peer for `acp-lsp-bridge doctor`.
//
// Environment:
//   PEERS_NODE_MODULES   node_modules folder holding @agentclientprotocol/sdk (required)
//   NO_NES_AGENT_MODE    what it does (default "chat"):
//     chat    initialize answers without agentCapabilities.nes (a chat agent with two auth
//             methods); it has no nes/start handler, so the SDK answers nes/start with -32601
//     refuse  initialize advertises nes (didOpen, didChange full), but there is still no
//             nes/start handler: the SDK answers nes/start with -32601 "Method not found"
//     auth    initialize advertises nes; nes/start answers -32000 "Authentication required" with
//             data {reason: "auth_required"}, as the NES RFD describes
//     exit    initialize advertises nes; at nes/start it writes a line to stderr and exits with
//             status 3 without answering
//     early   writes a long line to stderr and exits with status 41 before reading anything, as
//             gemini does without --acp when it has no API key
//   In the auth mode it also offers a terminal sign-in method ("login", args ["--login"], env
//   AGENT_LOGIN=1), but only to a client whose initialize says clientCapabilities.auth.terminal,
//   as claude-agent-acp does.
//   NO_NES_AGENT_LINGER=1  ignore stdin's end and SIGTERM, as codex-acp's native binary does: the
//                          bridge has to kill it, which takes it seconds
//   NO_NES_AGENT_LOG     file to append one JSON object per request read from stdin, whether or
//                        not the agent has a handler for it (optional): {"method": M}; the first
//                        line is {"pid": PID}
//
// It answers initialize with agentInfo {name: "no-nes-agent", title: "No NES test agent",
// version: "0.0.1"} and exits when its stdin closes.

import { Readable, Writable } from "node:stream";
import fs from "node:fs";
import { loadSDK } from "./agent-kit.mjs";

const { acp } = await loadSDK("no-nes-agent");

const MODE = process.env.NO_NES_AGENT_MODE || "chat";
const LOG = process.env.NO_NES_AGENT_LOG || "";
if (!["chat", "refuse", "auth", "exit", "early"].includes(MODE)) {
  process.stderr.write(`no-nes-agent: unknown NO_NES_AGENT_MODE ${MODE}\n`);
  process.exit(2);
}
if (MODE === "early") {
  process.stderr.write("no-nes-agent: starting\n");
  process.stderr.write(
    "When using no-nes-agent in a non-interactive environment, set NO_NES_AGENT_API_KEY in your environment or in the settings file, " +
      "or choose another auth method with --auth; see the documentation for every option (this line is long on purpose)\n",
    () => process.exit(41),
  );
  await new Promise(() => {});
}
if (LOG) fs.appendFileSync(LOG, JSON.stringify({ pid: process.pid }) + "\n");
const LINGER = process.env.NO_NES_AGENT_LINGER === "1";
if (LINGER) {
  process.on("SIGTERM", () => {});
  setInterval(() => {}, 1000);
}

// Records every request as it comes off stdin, before the SDK sees it.
let rest = "";
function tapIn(chunk) {
  if (!LOG) return;
  const lines = (rest + chunk.toString("utf8")).split("\n");
  rest = lines.pop();
  for (const line of lines) {
    try {
      const msg = JSON.parse(line);
      if (msg && typeof msg.method === "string" && "id" in msg) fs.appendFileSync(LOG, JSON.stringify({ method: msg.method }) + "\n");
    } catch {
      // not a message; the SDK reports it
    }
  }
}

const app = acp.agent({ name: "no-nes-agent" });

// Whether the client said it handles terminal sign-in (clientCapabilities.auth.terminal).
function offersTerminalAuth(params) {
  return params?.clientCapabilities?.auth?.terminal === true;
}

app.onRequest(acp.methods.agent.initialize, ({ params }) => {
  const agentCapabilities = { loadSession: false, promptCapabilities: { image: true, embeddedContext: true } };
  if (MODE !== "chat") {
    agentCapabilities.nes = { events: { document: { didOpen: {}, didChange: { syncKind: "full" } } } };
  }
  return {
    protocolVersion: 1,
    agentCapabilities,
    agentInfo: { name: "no-nes-agent", title: "No NES test agent", version: "0.0.1" },
    authMethods:
      MODE === "chat" || MODE === "auth"
        ? [
            { id: "chatgpt", name: "Log in with ChatGPT", description: "a browser sign-in" },
            { id: "api-key", name: "Use an API key" },
            ...(MODE === "auth" && offersTerminalAuth(params)
              ? [{ type: "terminal", id: "login", name: "Log in in a terminal", args: ["--login"], env: { AGENT_LOGIN: "1" } }]
              : []),
          ]
        : [],
  };
});

if (MODE === "auth") {
  app.onRequest(acp.methods.agent.nes.start, () => {
    throw acp.RequestError.authRequired({ reason: "auth_required" });
  });
}

if (MODE === "exit") {
  app.onRequest(acp.methods.agent.nes.start, () => {
    process.stderr.write("no-nes-agent: no model is configured, giving up\n", () => process.exit(3));
    return new Promise(() => {}); // never answers
  });
}

// Every other request (nes/start in the chat and refuse modes) gets the SDK's own -32601.
app.onNotification("*", () => {});

process.stdin.on("data", tapIn);
const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
process.stdout.on("error", () => process.exit(0));
connection.closed.then(() => {
  if (!LINGER) process.exit(0);
});
