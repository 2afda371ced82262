#!/usr/bin/env node
// A scripted v2 client on the official TypeScript SDK's experimental v2 apps (@agentclientprotocol/sdk
// 2.4.0, `client()` from "@agentclientprotocol/sdk/experimental/v2"), for the live tests of
// `acp-lifecycle agent`. It starts AGENT_CMD, opens one session and, driven by SEED, sends prompts
// (text, or a "/" command), cancels a pending prompt with $/cancel_request (the SDK's
// cancellationSignal), sends session/cancel, resumes the session with or without replay, answers
// permission requests (selected, or cancelled once the agent cancels them), waits a while for the
// session to settle, then closes it.
//
// --broken: a client that stops the work (session/cancel) when a permission request comes, then answers
// the request the agent cancelled with `selected`, a moment after the $/cancel_request reached it (the
// user clicked "allow" on a dialog already gone).
//
// It writes OUT.json: every message it sent and received, in order, and what the SDK handed back.
//
//   node client.mjs OUT.json SEED [--broken] -- AGENT_CMD [ARGS...]

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const args = process.argv.slice(2);
const dashes = args.indexOf("--");
const [out, seedText, ...flags] = args.slice(0, dashes);
const command = args.slice(dashes + 1);
if (!out || dashes < 0 || command.length === 0 || !/^\d+$/.test(seedText ?? "")) {
  console.error("usage: node client.mjs OUT.json SEED [--broken] -- AGENT_CMD [ARGS...]");
  process.exit(2);
}
const broken = flags.includes("--broken");

// mulberry32: a small seeded generator, so that a seed names one script
let state = Number(seedText) >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (xs) => xs[Math.floor(random() * xs.length)];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const log = []; // {dir: "sent" | "received", msg}
const outcome = { prompts: [], permissions: [], updates: [], resumes: [], errors: [] };
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const tap = (dir) => new TransformStream({ transform(msg, c) { log.push({ dir, msg }); c.enqueue(msg); } });
const sentTap = tap("sent");
sentTap.readable.pipeTo(stream.writable);
const watched = { readable: stream.readable.pipeThrough(tap("received")), writable: sentTap.writable };
const cwd = "/tmp/project";
const answering = new Set(); // permission requests the user has not answered yet

const app = acp
  .client({ name: "agent-test-client" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params, signal, agent }) => {
    const answer = (async () => {
      const option = params.options[0].optionId;
      // a user who answers at once or after a moment, or stops the work instead (session/cancel) and
      // leaves the dialog open until the agent cancels the request; the broken client always stops it
      const stop = broken || random() < 0.3;
      // (the $/cancel_request may have come before this handler ran: the signal is aborted already)
      const aborted = signal.aborted ? Promise.resolve(true)
        : new Promise((resolve) => signal.addEventListener("abort", () => resolve(true), { once: true }));
      if (stop) await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
      const cancelled = await Promise.race([sleep(stop ? 1500 : pick([0, 20, 80])).then(() => false), aborted]);
      if (cancelled && broken) {
        await sleep(2500); // the user clicks "allow" on a dialog the agent withdrew a while ago
        outcome.permissions.push("selected after cancel");
        return { outcome: { outcome: "selected", optionId: option } };
      }
      // stopped and never cancelled by the agent: the user dismisses the dialog
      const no = cancelled || stop;
      outcome.permissions.push(cancelled ? "cancelled" : stop ? "dismissed" : "selected");
      return no ? { outcome: { outcome: "cancelled" } } : { outcome: { outcome: "selected", optionId: option } };
    })();
    answering.add(answer);
    answer.finally(() => answering.delete(answer));
    return answer;
  })
  .onNotification(acp.methods.client.session.update, () => {});

try {
  await app.connectWith(watched, async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION, info: { name: "agent-test-client", version: "1.0.0" }, capabilities: {},
    });
    const session = await ctx.buildSession(cwd).start();
    let last = "idle";
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const m = await session.nextUpdate();
        outcome.updates.push(m.update.sessionUpdate + (m.kind === "stop" ? `:${m.stopReason ?? ""}` : ""));
        if (m.update.sessionUpdate === "state_update") last = m.update.state;
      }
    })().catch(() => {});
    const pending = [];
    let unsettled = 0; // prompts not yet answered
    const actions = 2 + Math.floor(random() * 5);
    for (let i = 0; i < actions; i++) {
      const what = pick(["prompt", "prompt", "prompt", "cancel-request", "cancel", "resume", "wait"]);
      if (what === "prompt" || (what === "cancel-request" && pending.length === 0)) {
        const ac = new AbortController();
        const text = random() < 0.2 ? "/compact" : `question ${i}`;
        unsettled += 1;
        const p = session.prompt(text, { cancellationSignal: ac.signal }).then(
          (r) => outcome.prompts.push({ text, messageId: r.messageId }),
          (e) => outcome.prompts.push({ text, error: e.code ?? String(e) }),
        ).finally(() => { unsettled -= 1; });
        pending.push({ p, ac });
      } else if (what === "cancel-request") {
        pick(pending).ac.abort();
      } else if (what === "cancel" && answering.size === 0 && (last !== "idle" || unsettled > 0)) {
        // the stop button: only while work runs or a prompt waits (the model's client cancels only
        // then), and not while a permission dialog is open (its user stops the work from the dialog:
        // the model's client answers no request after it sent session/cancel, but cancelled)
        await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
      } else if (what === "resume") {
        const replay = random() < 0.5;
        const params = { sessionId: session.sessionId, cwd, ...(replay ? { replayFrom: { type: "start" } } : {}) };
        await ctx.request(acp.methods.agent.session.resume, params);
        outcome.resumes.push(replay ? "replay" : "no-replay");
      }
      await sleep(Math.floor(random() * 60));
    }
    // let the session settle (every prompt answered, idle), a while at most; then close it
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      const settled = await Promise.race([Promise.all(pending.map((x) => x.p)).then(() => true), sleep(50).then(() => false)]);
      if (settled && last === "idle") break;
    }
    // the user answers every open dialog before the editor closes the session
    await Promise.race([Promise.all([...answering]), sleep(3000)]);
    await ctx.request(acp.methods.agent.session.close, { sessionId: session.sessionId });
    await Promise.race([Promise.all(pending.map((x) => x.p)), sleep(3000)]);
    // closing cancels the permission requests still open: the user's dialogs answer `cancelled`
    await Promise.race([Promise.all([...answering]), sleep(3000)]);
    reading = false;
    session.dispose();
    void reader;
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
