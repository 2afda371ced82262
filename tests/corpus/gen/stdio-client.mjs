// An SDK client that runs an agent command as a child process and drives one
// scenario over its stdio: the end-to-end test of `acp-lifecycle record`.
//
//   node stdio-client.mjs AGENT [ARGS...]
//
// for example `node stdio-client.mjs acp-lifecycle record out.jsonl -- node stdio-agent.mjs`.
// Exit status: the child's, or 1 when the scenario fails.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

import { Bench, settle } from "./harness.mjs";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? 128)));

const bench = new Bench();
const c = new (await import("./harness.mjs")).TestClient(bench, "stdio");
try {
  await c.attach(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  const s = await c.newSession("/work/project");
  await c.turn(s, "Hello over stdio");
  c.permissions.push("allow");
  await c.turn(s, "/perm");
  await c.turn(s, "/bg");
  let from = c.mark();
  await c.tick(s, "background");
  await c.idle(s, from);
  from = c.mark();
  await c.prompt(s, "/slow");
  await c.state(s, "running", from);
  const held = c.prompt(s, "Held while slow").catch((e) => e.code);
  await settle();
  await c.cancel(s);
  await c.idle(s, from);
  if ((await held) !== -32800) throw new Error("the held prompt was not answered -32800");
  await c.turn(s, "/fail");
  await c.close(s);
} catch (error) {
  process.stderr.write(`stdio client: ${error.stack ?? error}\n`);
  child.kill();
  process.exit(1);
}
child.stdin.end();
process.exit(await exited);
