// session-agent.mjs: a coding agent written with the official ACP SDK (@agentclientprotocol/sdk,
// entry point experimental/nes, as the other peers here) that has sessions and no Next Edit
// Suggestions, the way Codex, Claude and Gemini's ACP agents are: the bridge keeps it and asks it
// for suggestions with session/new and one session/prompt per suggestion (acpside/prompts.go).
// Used by e2e/prompts_test.go, testdata/peers/lsp-prompts-e2e.mjs and the Neovim prompt test.
//
// Environment:
//   PEERS_NODE_MODULES     node_modules folder holding @agentclientprotocol/sdk (required)
//   SESSION_AGENT_LOG      file to append one JSON object per line to (optional; keep it outside
//                          the workspace: the bridge watches the workspace's files during a prompt)
//   SESSION_AGENT_RULES    JSON array [{find, replace}]: the edit this agent "predicts"; each rule
//                          replaces every occurrence of find in the editable region, in order
//                          (default [])
//   SESSION_AGENT_MODES=1  session/new offers modes: default (current), "read-only" ("Read Only")
//                          and "full-access" ("Full Access")
//   SESSION_AGENT_SLOW_MS  how long the slow mode streams before it answers (default 60000)
//   SESSION_AGENT_API_KEY  in the auth mode: set, the agent is signed in from the start
//   SESSION_AGENT_CLOSE=1  initialize offers sessionCapabilities.close, and session/close ends a
//                          session (its child process too)
//   SESSION_AGENT_CHILD=1  each session keeps a child process of its own (a node process that
//                          sleeps), as an agent running a CLI per session does; it ends with
//                          session/close or when this agent exits
//   SESSION_AGENT_MODE     how it answers a prompt (default "text"):
//     text      the rewritten editable region in agent_message_chunk text, between the markers,
//               streamed in a few chunks. The region is the one between <|editable_region_start|>
//               and <|editable_region_end|> that holds <|user_cursor_is_here|> (the instructions
//               show an example region too); the cursor marker is removed and the rules applied.
//     slow      streams "." every 200 ms for SESSION_AGENT_SLOW_MS, then answers as text; on
//               session/cancel it stops at once, logs {"event":"cancelled"} and answers stopReason
//               "cancelled"
//     toolcall  proposes the edit as a coding agent does: a tool_call session/update (kind
//               "edit", content [{type: "diff", path, oldText, newText}]), then
//               session/request_permission with the options allow ("Allow", allow_once) and
//               reject ("Reject", reject_once); logs the answer ({"event":"permission"}), reports
//               the tool call completed or failed accordingly, writes nothing, and ends the turn
//               with a line of text
//     write     reads the file with fs/read_text_file, writes it whole with the rules applied to
//               the region with fs/write_text_file, logs both answers ({"event":"read"},
//               {"event":"write"}), and ends the turn with a line of text
//     disk      writes the file on disk by itself with node's fs (the region rewritten), logs
//               {"event":"disk-write","path":P}, then answers as text
//     auth      session/new answers auth_required (-32000) until authenticate was called with the
//               agent method (or SESSION_AGENT_API_KEY is set); then answers as text
//     fail      every prompt fails: an internal error (-32603), as when the CLI behind a session
//               crashed
//   The path of the file is read from the prompt ("The file PATH (language), lines ...").
//
// initialize answers without agentCapabilities.nes, with agentInfo {name: "session-agent", title:
// "Session test agent", version: "0.0.1"} and two authMethods: {id: "session-login", name: "Log in
// to Session Agent"} (an agent method: authenticate signs in) and {type: "env_var", id:
// "session-api-key", name: "Use an API key", vars: [{name: "SESSION_AGENT_API_KEY"}]}. ACP's
// schema in this SDK (2.4.0) knows only the agent and terminal kinds; the env_var kind is the one
// of ACP's auth-methods proposal, as the Go SDK (coder/acp-go-sdk) has it. The SDK does not check
// an agent's own answers, so it goes on the wire as written.
//
// The SDK's schemas check this agent's own session/update, session/request_permission and fs/*
// params, and the bridge's answers to them; a failure is logged as {"issue": ...}.
//
// Log lines (each with "t", the agent's clock in ms):
//   {"pid":PID,"event":"start","mode":M}   first
//   {"method":M,"id":ID,"params":P}        every request (with id) and notification read from stdin,
//                                          as on the wire, before the SDK sees it
//   {"event":"session","sessionId":S,"cwd":C,"mcpServers":N}  a session made
//   {"event":"auth_required"}              session/new refused for want of sign-in
//   {"event":"authenticated","methodId":M}
//   {"event":"set_mode","sessionId":S,"modeId":M}
//   {"event":"prompt","sessionId":S,"region":R|null,"path":P|null}  a prompt and what it read in it
//   {"event":"answered","sessionId":S,"stopReason":R}
//   {"event":"cancel","sessionId":S}       session/cancel received
//   {"event":"cancelled","sessionId":S}    the slow prompt stopped for it
//   {"event":"child","sessionId":S,"pid":P}   the session's child process started
//   {"event":"closed","sessionId":S,"pid":P|null}  session/close received; the child ended
//   {"event":"prompt-failed","sessionId":S}   the fail mode refused a prompt
//   {"event":"permission"|"read"|"write","result":R} | {...,"error":{code,message}}
//                                          the bridge's answer to session/request_permission,
//                                          fs/read_text_file, fs/write_text_file
//   {"event":"disk-write","path":P}
//   {"issue":TEXT,...}                     something this agent found wrong
//   {"event":"exit"}
//
// It exits when its stdin closes.

import path from "node:path";
import fs from "node:fs";
import { spawn } from "node:child_process";
import { loadSDK, jsonEnv, jsonLog, stdio } from "./agent-kit.mjs";

const { acp, core } = await loadSDK("session-agent", { core: true });

const MODE = process.env.SESSION_AGENT_MODE || "text";
const LOG = process.env.SESSION_AGENT_LOG || "";
const MODES = process.env.SESSION_AGENT_MODES === "1";
const SLOW_MS = Number(process.env.SESSION_AGENT_SLOW_MS || "60000");
const CLOSE = process.env.SESSION_AGENT_CLOSE === "1";
const CHILD = process.env.SESSION_AGENT_CHILD === "1";
if (!["text", "slow", "toolcall", "write", "disk", "auth", "fail"].includes(MODE)) {
  process.stderr.write(`session-agent: unknown SESSION_AGENT_MODE ${MODE}\n`);
  process.exit(2);
}
const RULES = jsonEnv("session-agent", "SESSION_AGENT_RULES");

const { log, issue } = jsonLog("session-agent", LOG);
log({ pid: process.pid, event: "start", mode: MODE });

// ---------------------------------------------------------------------------------------------
// Reading the prompt.

const START = "<|editable_region_start|>";
const END = "<|editable_region_end|>";
const CURSOR = "<|user_cursor_is_here|>";
const REGION = /<\|editable_region_start\|>\n([\s\S]*?)<\|editable_region_end\|>/g;
const FILE = /The file (.+?)(?: \([^()\n]*\))?(?:, lines \d+-\d+| from line \d+), with the editable region/;

// The prompt's region with the cursor (its text without the marker), the rewritten one, and the
// file's path.
function readPrompt(text) {
  let region = null;
  for (const m of text.matchAll(REGION)) {
    if (m[1].includes(CURSOR)) region = m[1].replaceAll(CURSOR, "");
  }
  const file = FILE.exec(text);
  return { region, rewritten: region === null ? null : rewrite(region), path: file ? file[1] : null };
}

function rewrite(region) {
  let out = region;
  for (const r of RULES) out = out.split(r.find).join(r.replace);
  return out;
}

function textAnswer(p) {
  if (p.region === null) return "I see no editable region with the cursor in it.";
  return `Here is the region after the next edit:\n${START}\n${p.rewritten}${END}\n`;
}

// ---------------------------------------------------------------------------------------------
// Calls to the client, checked against the SDK's schemas.

function checkOwn(schema, what, params) {
  const r = schema.safeParse(params);
  if (!r.success) issue(`this agent's own ${what} fails the SDK's schema`, { params, issues: r.error.issues });
}

async function update(client, sessionId, u) {
  const params = { sessionId, update: u };
  checkOwn(core.zSessionNotification, "session/update", params);
  await client.notify(acp.methods.client.session.update, params);
}

// say streams text as agent_message_chunk updates, in about four chunks.
async function say(client, sessionId, text) {
  const n = Math.max(1, Math.ceil(text.length / 4));
  for (let i = 0; i < text.length; i += n) {
    await update(client, sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: text.slice(i, i + n) } });
  }
}

// call sends a request to the client and logs its answer as event, checked with answerSchema.
async function call(client, event, method, params, ownSchema, answerSchema) {
  checkOwn(ownSchema, method, params);
  try {
    const result = await client.request(method, params);
    const r = answerSchema.safeParse(result);
    if (!r.success) issue(`the answer to ${method} fails the SDK's schema`, { result, issues: r.error.issues });
    log({ event, result });
    return { result };
  } catch (err) {
    const error = { code: err?.code ?? null, message: String(err?.message ?? err) };
    log({ event, error });
    return { error };
  }
}

// ---------------------------------------------------------------------------------------------
// Sessions.

const sessions = new Map(); // sessionId -> {mode, child}
const running = new Map(); // sessionId -> {cancelled, wake}
let nextSession = 0;
let signedIn = MODE !== "auth" || !!process.env.SESSION_AGENT_API_KEY;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const app = acp.agent({ name: "session-agent" });

app.onRequest(acp.methods.agent.initialize, () => ({
  protocolVersion: 1,
  agentCapabilities: {
    loadSession: false,
    promptCapabilities: { image: false, audio: false, embeddedContext: true },
    ...(CLOSE ? { sessionCapabilities: { close: {} } } : {}),
  },
  agentInfo: { name: "session-agent", title: "Session test agent", version: "0.0.1" },
  authMethods: [
    { id: "session-login", name: "Log in to Session Agent", description: "the agent signs in by itself" },
    { type: "env_var", id: "session-api-key", name: "Use an API key", vars: [{ name: "SESSION_AGENT_API_KEY" }] },
  ],
}));

app.onRequest(acp.methods.agent.authenticate, ({ params }) => {
  if (params.methodId !== "session-login") {
    throw acp.RequestError.invalidParams({ methodId: params.methodId }, "this method is not signed in with authenticate");
  }
  signedIn = true;
  log({ event: "authenticated", methodId: params.methodId });
  return {};
});

app.onRequest(acp.methods.agent.session.new, ({ params }) => {
  if (!signedIn) {
    log({ event: "auth_required" });
    throw acp.RequestError.authRequired();
  }
  const sessionId = `session-${process.pid}-${++nextSession}`;
  const s = { mode: "default", child: null };
  sessions.set(sessionId, s);
  log({ event: "session", sessionId, cwd: params.cwd, mcpServers: params.mcpServers.length });
  if (CHILD) {
    s.child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
    log({ event: "child", sessionId, pid: s.child.pid });
  }
  const resp = { sessionId };
  if (MODES) {
    resp.modes = {
      currentModeId: "default",
      availableModes: [
        { id: "default", name: "Default", description: "asks before it edits" },
        { id: "read-only", name: "Read Only", description: "reads, never edits" },
        { id: "full-access", name: "Full Access", description: "edits and runs commands without asking" },
      ],
    };
  }
  return resp;
});

app.onRequest(acp.methods.agent.session.setMode, ({ params }) => {
  const s = sessions.get(params.sessionId);
  if (!s) throw acp.RequestError.sessionNotFound(params.sessionId);
  if (!MODES || !["default", "read-only", "full-access"].includes(params.modeId)) {
    throw acp.RequestError.invalidParams({ modeId: params.modeId }, "no such mode");
  }
  s.mode = params.modeId;
  log({ event: "set_mode", sessionId: params.sessionId, modeId: params.modeId });
  return {};
});

app.onRequest(acp.methods.agent.session.close, ({ params }) => {
  const s = sessions.get(params.sessionId);
  if (!CLOSE) throw acp.RequestError.methodNotFound(acp.methods.agent.session.close);
  if (!s) throw acp.RequestError.sessionNotFound(params.sessionId);
  const r = running.get(params.sessionId);
  if (r) {
    r.cancelled = true;
    r.wake();
  }
  sessions.delete(params.sessionId);
  s.child?.kill();
  log({ event: "closed", sessionId: params.sessionId, pid: s.child?.pid ?? null });
  return {};
});

// The children end with this agent, whatever way it ends.
process.on("exit", () => {
  for (const s of sessions.values()) s.child?.kill();
});

app.onNotification(acp.methods.agent.session.cancel, ({ params }) => {
  log({ event: "cancel", sessionId: params.sessionId });
  const r = running.get(params.sessionId);
  if (r) {
    r.cancelled = true;
    r.wake();
  }
});

app.onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
  const sessionId = params.sessionId;
  if (!sessions.has(sessionId)) throw acp.RequestError.sessionNotFound(sessionId);
  const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("");
  const p = readPrompt(text);
  log({ event: "prompt", sessionId, region: p.region, path: p.path });
  const run = { cancelled: false, wake: () => {} };
  running.set(sessionId, run);
  try {
    const stopReason = await answer(client, sessionId, p, run);
    log({ event: "answered", sessionId, stopReason });
    return { stopReason };
  } finally {
    if (running.get(sessionId) === run) running.delete(sessionId);
  }
});

async function answer(client, sessionId, p, run) {
  switch (MODE) {
    case "slow": {
      const until = Date.now() + SLOW_MS;
      while (Date.now() < until && !run.cancelled) {
        await update(client, sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "." } });
        await new Promise((r) => {
          run.wake = r;
          setTimeout(r, 200);
        });
      }
      if (run.cancelled) {
        log({ event: "cancelled", sessionId });
        return "cancelled";
      }
      await say(client, sessionId, "\n" + textAnswer(p));
      return "end_turn";
    }
    case "toolcall": {
      if (p.region === null || p.path === null) {
        issue("toolcall: no region or no path in the prompt");
        await say(client, sessionId, textAnswer(p));
        return "end_turn";
      }
      const diff = { type: "diff", path: p.path, oldText: p.region, newText: p.rewritten };
      const toolCall = { toolCallId: "edit-1", title: `Edit ${path.basename(p.path)}`, kind: "edit", status: "pending", content: [diff], locations: [{ path: p.path }] };
      await update(client, sessionId, { sessionUpdate: "tool_call", ...toolCall });
      const r = await call(
        client,
        "permission",
        acp.methods.client.session.requestPermission,
        {
          sessionId,
          toolCall,
          options: [
            { optionId: "allow", name: "Allow", kind: "allow_once" },
            { optionId: "reject", name: "Reject", kind: "reject_once" },
          ],
        },
        core.zRequestPermissionRequest,
        core.zRequestPermissionResponse,
      );
      const outcome = r.result?.outcome;
      const allowed = outcome?.outcome === "selected" && outcome.optionId === "allow";
      // Allowed, a real agent would write the file now; this one never does.
      await update(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId: "edit-1", status: allowed ? "completed" : "failed" });
      await say(client, sessionId, allowed ? "I edited the file." : "The edit was not allowed; I changed nothing.");
      return "end_turn";
    }
    case "write": {
      if (p.region === null || p.path === null) {
        issue("write: no region or no path in the prompt");
        await say(client, sessionId, textAnswer(p));
        return "end_turn";
      }
      const read = await call(client, "read", acp.methods.client.fs.readTextFile, { sessionId, path: p.path }, core.zReadTextFileRequest, core.zReadTextFileResponse);
      if (!read.result) {
        await say(client, sessionId, "I could not read the file.");
        return "end_turn";
      }
      const content = read.result.content;
      const at = content.indexOf(p.region);
      if (at < 0) issue("write: the region is not in the file that fs/read_text_file gave", { region: p.region });
      const whole = at < 0 ? content : content.slice(0, at) + p.rewritten + content.slice(at + p.region.length);
      await call(client, "write", acp.methods.client.fs.writeTextFile, { sessionId, path: p.path, content: whole }, core.zWriteTextFileRequest, core.zWriteTextFileResponse);
      await say(client, sessionId, "I wrote the file.");
      return "end_turn";
    }
    case "fail":
      log({ event: "prompt-failed", sessionId });
      throw acp.RequestError.internalError({ sessionId }, "the CLI behind this session crashed");
    case "disk": {
      if (p.region !== null && p.path !== null) {
        const content = fs.readFileSync(p.path, "utf8");
        const at = content.indexOf(p.region);
        const whole = at < 0 ? content + "\n// changed by session-agent\n" : content.slice(0, at) + p.rewritten + content.slice(at + p.region.length);
        fs.writeFileSync(p.path, whole);
        log({ event: "disk-write", path: p.path });
      } else {
        issue("disk: no region or no path in the prompt");
      }
      await say(client, sessionId, textAnswer(p));
      return "end_turn";
    }
    default: // text, auth
      await say(client, sessionId, textAnswer(p));
      return "end_turn";
  }
}

app.onNotification("*", () => {});

// ---------------------------------------------------------------------------------------------
// Streams: stdin through a tap that logs every request and notification as on the wire.

const { input, output } = stdio({
  issue,
  onIn(msg) {
    if (msg === null || typeof msg !== "object" || typeof msg.method !== "string") return;
    const entry = { method: msg.method, params: msg.params ?? null };
    if ("id" in msg) entry.id = msg.id;
    log(entry);
  },
});

const connection = app.connect(acp.ndJsonStream(output, input));
connection.closed.then(() => {
  log({ event: "exit" });
  process.exit(0);
});
