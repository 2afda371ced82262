#!/usr/bin/env node
// A v2 client on the official TypeScript SDK's experimental v2 apps (@agentclientprotocol/sdk 2.4.0,
// `client()` from "@agentclientprotocol/sdk/experimental/v2"). It starts AGENT_CMD (here:
// `acp-lifecycle bridge serve --to v2 ... -- <a v1 agent>`) and runs four sessions on one connection:
//
//   1. a prompt that completes (the agent asks permission; the client allows)
//   2. a prompt cancelled with session/cancel once it was inserted (a permission request it asks,
//      as agents --like-published do, is left unanswered until the agent cancels it)
//   3. a prompt that fails after insertion, then one the agent rejects before insertion
//   4. session/resume of session 1 with replayFrom {type: "start"}, then session/close of all three
//
// It writes OUT.json: every message it sent and received, in order, and what the SDK gave it back
// (results, idle stop reasons, errors), so the test can check that the client saw every message the
// bridge recorded, in order, and that the SDK accepted each of them.
//
//   node v2-client.mjs OUT.json -- AGENT_CMD [ARGS...]

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const [out, dashes, ...command] = process.argv.slice(2);
if (!out || dashes !== "--" || command.length === 0) {
  console.error("usage: node v2-client.mjs OUT.json -- AGENT_CMD [ARGS...]");
  process.exit(2);
}

const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const log = []; // {dir: "sent" | "received", msg}
const outcome = {}; // what the SDK handed back
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const tap = (dir) => new TransformStream({ transform(msg, c) { log.push({ dir, msg }); c.enqueue(msg); } });
const sentTap = tap("sent");
sentTap.readable.pipeTo(stream.writable);
const watched = { readable: stream.readable.pipeThrough(tap("received")), writable: sentTap.writable };

const cwd = "/tmp/project";
const text = (t) => [{ type: "text", text: t }];

async function untilIdle(session) {
  const seen = [];
  for (;;) {
    const m = await session.nextUpdate();
    seen.push(m.update.sessionUpdate);
    if (m.kind === "stop") return { stopReason: m.stopReason, error: m.update.error ?? null, updates: seen };
  }
}

const app = acp
  .client({ name: "v2-client-ts" })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
    if (params.title === "Long search") {
      // The slow prompt's permission request (agents --like-published ask one): left
      // unanswered until the agent cancels it with $/cancel_request (the work ended).
      const how = await new Promise((resolve) => {
        if (signal.aborted) return resolve("$/cancel_request");
        const timer = setTimeout(() => resolve("timeout"), 10000);
        signal.addEventListener("abort", () => { clearTimeout(timer); resolve("$/cancel_request"); });
      });
      outcome.slowPermission = { cancelledBy: how };
      return { outcome: { outcome: "cancelled" } };
    }
    outcome.permission = { title: params.title, subject: params.subject?.type ?? null };
    return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
  })
  .onNotification(acp.methods.client.session.update, () => {});

try {
  await app.connectWith(watched, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "v2-client-ts", version: "1.0.0" },
      capabilities: {},
    });
    outcome.initialize = { protocolVersion: init.protocolVersion, info: init.info };

    const s1 = await ctx.buildSession(cwd).start();
    const p1 = await s1.prompt("/perm read the notes");
    outcome.prompt = { messageId: p1.messageId, ...(await untilIdle(s1)) };

    const s2 = await ctx.buildSession(cwd).start();
    const p2 = await s2.prompt("/slow search, to be cancelled");
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId: s2.sessionId });
    outcome.cancelled = { messageId: p2.messageId, ...(await untilIdle(s2)) };

    const s3 = await ctx.buildSession(cwd).start();
    const p3 = await s3.prompt("/fail the provider is down");
    outcome.failed = { messageId: p3.messageId, ...(await untilIdle(s3)) };
    try {
      await s3.prompt("/reject this one");
      outcome.rejected = { error: null };
    } catch (e) {
      outcome.rejected = { error: { code: e.code, message: e.message } };
    }

    const resumed = await ctx.request(acp.methods.agent.session.resume, {
      sessionId: s1.sessionId, cwd, replayFrom: { type: "start" },
    });
    outcome.resumed = { result: resumed, replay: (await untilIdle(s1)).updates };

    for (const s of [s1, s2, s3]) {
      await ctx.request(acp.methods.agent.session.close, { sessionId: s.sessionId });
      s.dispose();
    }
    outcome.closed = 3;
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
