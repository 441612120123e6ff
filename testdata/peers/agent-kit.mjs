// agent-kit.mjs: what the test agents written with the official ACP SDK share (nes-agent.mjs,
// context-agent.mjs, session-agent.mjs): loading the SDK from PEERS_NODE_MODULES, settings given
// as JSON in the environment, a log of one JSON object a line, and the stdio streams the SDK reads
// and writes, with a tap on every message that comes in before the SDK sees it and, where asked,
// on every one that goes out.

import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";
import fs from "node:fs";

// loadSDK loads the SDK's NES entry point (acp) and, with core, the core protocol's schemas
// (session/update, permissions, fs/*): the package does not export those, so they come from the
// file its NES entry point imports. Without PEERS_NODE_MODULES the agent says so and exits 2.
export async function loadSDK(name, { core = false } = {}) {
  const modulesDir = process.env.PEERS_NODE_MODULES;
  if (!modulesDir) {
    process.stderr.write(`${name}: PEERS_NODE_MODULES is not set\n`);
    process.exit(2);
  }
  const require = createRequire(modulesDir.replace(/\/?$/, "/"));
  const nesEntry = require.resolve("@agentclientprotocol/sdk/experimental/nes");
  const acp = await import(pathToFileURL(nesEntry).href);
  if (!core) return { acp };
  const schemas = path.join(path.dirname(nesEntry), "../v1/unstable/schema/zod.gen.js");
  return { acp, core: await import(pathToFileURL(schemas).href) };
}

// jsonEnv is the JSON value of the environment variable v ("[]" when it is unset); when it is not
// JSON the agent says so and exits 2.
export function jsonEnv(name, v) {
  try {
    return JSON.parse(process.env[v] || "[]");
  } catch (err) {
    process.stderr.write(`${name}: ${v} is not JSON: ${err}\n`);
    process.exit(2);
  }
}

// jsonLog appends objects to file, one a line, each with "t", the agent's clock in ms (nothing
// when file is ""); issue logs something the agent found wrong and says it on stderr too.
export function jsonLog(name, file) {
  function log(obj) {
    if (!file) return;
    try {
      fs.appendFileSync(file, JSON.stringify({ t: Math.round(performance.now()), ...obj }) + "\n");
    } catch (e) {
      process.stderr.write(`${name}: cannot write log: ${e}\n`);
    }
  }
  function issue(text, extra = {}) {
    log({ issue: text, ...extra });
    process.stderr.write(`${name}: issue: ${text} ${JSON.stringify(extra)}\n`);
  }
  return { log, issue };
}

// stdio gives the SDK's input and output streams over process stdin and stdout.
//   onIn(msg)   every JSON value read from stdin, in order, before the SDK gets its bytes
//               (an unparsable line goes to issue instead)
//   onOut(msg)  every JSON value the SDK writes, if given
//   onEnd()     stdin closed, if given
// The agent exits when stdout is gone.
export function stdio({ issue, onIn, onOut, onEnd }) {
  let rest = Buffer.alloc(0);
  function tapIn(chunk) {
    let buf = Buffer.concat([rest, chunk]);
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
      const line = buf.subarray(0, nl).toString("utf8").trim();
      buf = buf.subarray(nl + 1);
      if (!line) continue;
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        issue("unparsable line on stdin", { line: line.slice(0, 200) });
        continue;
      }
      onIn(msg);
    }
    rest = buf;
  }

  const input = new ReadableStream({
    start(controller) {
      process.stdin.on("data", (chunk) => {
        tapIn(chunk);
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      });
      process.stdin.on("end", () => {
        onEnd?.();
        controller.close();
      });
      process.stdin.on("error", (err) => controller.error(err));
    },
  });

  const decoder = new TextDecoder();
  const output = new WritableStream({
    write(chunk) {
      if (onOut) {
        for (const line of decoder.decode(chunk).split("\n")) {
          if (!line.trim()) continue;
          try {
            onOut(JSON.parse(line));
          } catch {
            // not ours to judge
          }
        }
      }
      return new Promise((resolve, reject) => {
        process.stdout.write(chunk, (err) => (err ? reject(err) : resolve()));
      });
    },
  });
  process.stdout.on("error", () => process.exit(0));
  return { input, output };
}
