#!/usr/bin/env node
// A v1 client on the official TypeScript SDK's v1 apps (@agentclientprotocol/sdk 2.4.0, `client()`).
// It starts AGENT_CMD (here: `acp-lifecycle bridge serve --to v1 ... -- <a v2 agent>`) and runs,
// on one connection, the same four sessions as v2-client.mjs in v1's terms:
//
//   1. a prompt that completes (the agent asks permission; the client allows): end_turn
//   2. a prompt cancelled with session/cancel once its echo arrived: cancelled
//   3. a prompt that fails after insertion (a v1 error response), then one rejected before it
//   4. session/load of session 1 (the replay), then session/close of all three
//
// It writes OUT.json: every message it sent and received, in order, and what the SDK returned.
//
//   node v1-client.mjs OUT.json -- AGENT_CMD [ARGS...]

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const [out, dashes, ...command] = process.argv.slice(2);
if (!out || dashes !== "--" || command.length === 0) {
  console.error("usage: node v1-client.mjs OUT.json -- AGENT_CMD [ARGS...]");
  process.exit(2);
}

const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const log = [];
const outcome = {};
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const tap = (dir) => new TransformStream({ transform(msg, c) { log.push({ dir, msg }); c.enqueue(msg); } });
const sentTap = tap("sent");
sentTap.readable.pipeTo(stream.writable);
const watched = { readable: stream.readable.pipeThrough(tap("received")), writable: sentTap.writable };

const cwd = "/tmp/project";

async function drain(session) {
  const seen = [];
  for (;;) {
    const m = await session.nextUpdate();
    if (m.kind === "stop") return { stopReason: m.stopReason, updates: seen };
    seen.push(m.update.sessionUpdate);
  }
}

const app = acp
  .client({ name: "v1-client-ts" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    outcome.permission = { toolCall: params.toolCall.toolCallId, title: params.toolCall.title ?? null };
    return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
  })
  .onNotification(acp.methods.client.session.update, () => {});

try {
  await app.connectWith(watched, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientInfo: { name: "v1-client-ts", version: "1.0.0" },
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    outcome.initialize = { protocolVersion: init.protocolVersion, agentInfo: init.agentInfo, loadSession: init.agentCapabilities?.loadSession };

    const s1 = await ctx.buildSession(cwd).start();
    const r1 = await s1.prompt("/perm read the notes");
    outcome.prompt = { ...r1, ...(await drain(s1)) };

    const s2 = await ctx.buildSession(cwd).start();
    const pending = s2.prompt("/slow search, to be cancelled");
    const first = await s2.nextUpdate(); // the echo: the turn is under way
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId: s2.sessionId });
    const r2 = await pending;
    outcome.cancelled = { ...r2, first: first.update?.sessionUpdate, ...(await drain(s2)) };

    const s3 = await ctx.buildSession(cwd).start();
    try {
      await s3.prompt("/fail the provider is down");
      outcome.failed = { error: null };
    } catch (e) {
      outcome.failed = { error: { code: e.code, message: e.message, data: e.data ?? null } };
    }
    try {
      await s3.prompt("/reject this one");
      outcome.rejected = { error: null };
    } catch (e) {
      outcome.rejected = { error: { code: e.code, message: e.message } };
    }

    const loaded = await ctx.request(acp.methods.agent.session.load, { sessionId: s1.sessionId, cwd, mcpServers: [] });
    outcome.loaded = { result: loaded };

    // session/close only where the agent advertises it (a v1 agent may not)
    const canClose = init.agentCapabilities?.sessionCapabilities?.close != null;
    for (const s of [s1, s2, s3]) {
      if (canClose) await ctx.request(acp.methods.agent.session.close, { sessionId: s.sessionId });
      s.dispose();
    }
    outcome.closed = canClose ? 3 : 0;
  });
  outcome.ok = true;
} catch (e) {
  outcome.ok = false;
  outcome.failure = String(e?.stack ?? e);
} finally {
  child.stdin.end();
  await new Promise((resolve) => child.once("exit", resolve));
  writeFileSync(out, JSON.stringify({ outcome, log }, null, 1) + "\n");
  process.exit(outcome.ok ? 0 : 1);
}
