#!/usr/bin/env node
// A v2 agent on the official TypeScript SDK's experimental v2 apps (@agentclientprotocol/sdk 2.4.0,
// `agent()` from "@agentclientprotocol/sdk/experimental/v2"), speaking ACP v2 on stdio. The SDK
// does the wire; this file decides what the agent says. A prompt (its first word; a leading "/" is
// ignored) is inserted at once (the
// user_message, then the {messageId} response); its work runs after the response:
//
//   "fail ..."   running, one agent message, then idle stopReason error with the error object
//   "slow ..."   running, one agent message, a tool call, then wait for session/cancel: idle cancelled
//   "reject"     an error response (-32602) before insertion
//   otherwise    running, a tool call, a permission request (requires_action), its result, a plan,
//                an agent message, idle end_turn
//
// session/resume with replayFrom {type: "start"} replays every retained message, then sends the
// current state, then answers; session/close cancels the work and answers.

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const sessions = new Map(); // sessionId -> { history: [update], cancel, state }
let next = 0;
const fresh = (prefix) => `${prefix}_${++next}`;
const text = (t) => ({ type: "text", text: t });

function session(sessionId) {
  const s = sessions.get(sessionId);
  if (!s) throw acp.RequestError.sessionNotFound(sessionId);
  return s;
}

async function say(client, sessionId, update, keep = true) {
  if (keep) session(sessionId).history.push(update);
  await client.notify(acp.methods.client.session.update, { sessionId, update });
}

async function state(client, sessionId, update) {
  session(sessionId).state = update.state;
  await client.notify(acp.methods.client.session.update, { sessionId, update: { sessionUpdate: "state_update", ...update } });
}

async function work(client, sid, words) {
  const s = session(sid);
  await state(client, sid, { state: "running" });
  const agentId = fresh("v2_agent");
  if (words.startsWith("fail")) {
    await say(client, sid, { sessionUpdate: "agent_message", messageId: agentId, content: [text("Trying...")] });
    await state(client, sid, {
      state: "idle", stopReason: "error",
      error: { code: -32000, message: "Authentication required", data: { provider: "example" } },
    });
    return;
  }
  if (words.startsWith("slow")) {
    await say(client, sid, { sessionUpdate: "agent_message_chunk", messageId: agentId, content: text("Working") });
    const toolCallId = fresh("v2_tool");
    await say(client, sid, { sessionUpdate: "tool_call_update", toolCallId, title: "Long search", kind: "search", status: "in_progress" });
    if (!s.cancelled) {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 20000);
        s.cancel = () => { clearTimeout(timer); resolve(); };
      });
    }
    s.cancel = null;
    await say(client, sid, { sessionUpdate: "tool_call_update", toolCallId, status: "cancelled" });
    await state(client, sid, { state: "idle", stopReason: "cancelled" });
    return;
  }
  const toolCallId = fresh("v2_tool");
  await say(client, sid, { sessionUpdate: "tool_call_update", toolCallId, title: "Read README.md", kind: "read", status: "pending" });
  await state(client, sid, { state: "requires_action" });
  const permission = await client.request(acp.methods.client.session.requestPermission, {
    sessionId: sid,
    title: "Read README.md?",
    subject: { type: "tool_call", toolCall: { toolCallId, title: "Read README.md" } },
    options: [
      { optionId: "allow", name: "Allow once", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
  });
  await state(client, sid, { state: "running" });
  const allowed = permission.outcome.outcome === "selected" && permission.outcome.optionId === "allow";
  await say(client, sid, {
    sessionUpdate: "tool_call_update", toolCallId, status: allowed ? "completed" : "failed",
    content: [{ type: "content", content: text(allowed ? "# Project" : "not allowed") }],
  });
  await say(client, sid, {
    sessionUpdate: "plan_update",
    plan: { type: "items", planId: "plan_1", entries: [{ content: "Summarise the README", priority: "high", status: "completed" }] },
  });
  await say(client, sid, { sessionUpdate: "agent_message", messageId: agentId, content: [text(`You said: ${words}`)] });
  await state(client, sid, { state: "idle", stopReason: "end_turn" });
}

const app = acp
  .agent({ name: "v2-agent-ts" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "v2-agent-ts", title: "v2 agent (TypeScript SDK)", version: "1.0.0" },
    capabilities: { session: { prompt: { embeddedContext: {} } } },
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    const sessionId = fresh("v2_sess");
    sessions.set(sessionId, { history: [], cancel: null, state: "idle" });
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.resume, async ({ params, client }) => {
    const s = session(params.sessionId);
    if (params.replayFrom) {
      for (const update of s.history) {
        await say(client, params.sessionId, update, false);
      }
    }
    await client.notify(acp.methods.client.session.update, {
      sessionId: params.sessionId, update: { sessionUpdate: "state_update", state: s.state },
    });
    return {};
  })
  .onRequest(acp.methods.agent.session.close, ({ params }) => {
    const s = session(params.sessionId);
    if (s.cancel) s.cancel();
    sessions.delete(params.sessionId);
    return {};
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const s = sessions.get(params.sessionId);
    if (s) s.cancelled = true; // the work under way is cancelled, whatever it is doing now
    if (s && s.cancel) s.cancel();
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const sid = params.sessionId;
    session(sid);
    const words = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join(" ").replace(/^\//, "");
    if (words.startsWith("reject")) throw acp.RequestError.invalidParams(undefined, "this agent rejects that prompt");
    session(sid).cancelled = false;
    const messageId = fresh("v2_user");
    // Insertion: the user message goes into the conversation, then the response says so.
    await say(client, sid, { sessionUpdate: "user_message", messageId, content: params.prompt });
    setImmediate(() => work(client, sid, words).catch((e) => console.error("v2 agent: work failed", e)));
    return { messageId };
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
