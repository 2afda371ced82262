#!/usr/bin/env node
// A v1 agent on the official TypeScript SDK's v1 apps (@agentclientprotocol/sdk 2.4.0, `agent()`),
// speaking ACP v1 on stdio. The SDK does the wire (framing, initialize, schemas, error responses);
// this file only decides what the agent says. What a prompt does depends on its first word (a leading "/" is ignored,
// so the clients' prompts also drive the corpus agent of tests/corpus/gen):
//
//   "fail ..."   echo, one agent chunk, then an error response (-32000) after the echo
//   "slow ..."   echo, one agent chunk, a tool call, then wait for session/cancel; answer cancelled
//   "reject"     an error response (-32602) before anything: rejected before insertion
//   otherwise    echo, a thought, a tool call, a permission request, its result, a plan, an
//                agent chunk, end_turn
//
// session/load replays every retained message (user and agent chunks, with their messageIds).
// session/resume and session/close are supported (the Python SDK agent lacks both).
//
// With --like-published it behaves on the wire as the published agents did (claude-agent-acp,
// gemini-cli, qwen-code): no echo of the prompt and no messageId on chunks; an
// available_commands_update in the middle of a reply; a usage_update with `used: null`
// (claude-agent-acp; invalid in both schemas); "slow" asks permission for a tool call it never
// announced and, cancelled, ends the turn without cancelling that request; "fail" fails with
// -32603 after streaming output.

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const published = process.argv.includes("--like-published");
const sessions = new Map(); // sessionId -> { history: [update], cancel: () => void | null }
let nextId = 0;
const fresh = (prefix) => `${prefix}_${++nextId}`;

function session(sessionId) {
  const s = sessions.get(sessionId);
  if (!s) throw acp.RequestError.sessionNotFound(sessionId);
  return s;
}

async function say(client, sessionId, update, keep = true) {
  if (keep) session(sessionId).history.push(update);
  await client.notify(acp.methods.client.session.update, { sessionId, update });
}

const text = (t) => ({ type: "text", text: t });

const app = acp
  .agent({ name: "v1-agent-ts" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentInfo: { name: "v1-agent-ts", title: "v1 agent (TypeScript SDK)", version: "1.0.0" },
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: false },
      sessionCapabilities: { resume: {}, close: {} },
    },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    const sessionId = fresh("ts_sess");
    sessions.set(sessionId, { history: [], cancel: null });
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
    const s = session(params.sessionId);
    for (const update of s.history) await say(client, params.sessionId, update, false);
    return {};
  })
  .onRequest(acp.methods.agent.session.resume, ({ params }) => {
    session(params.sessionId);
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
    if (s) s.cancelled = true; // the turn under way is cancelled, whatever it is doing now
    if (s && s.cancel) s.cancel();
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const sid = params.sessionId;
    const s = session(sid);
    const words = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join(" ").replace(/^\//, "");
    s.cancelled = false;
    if (words.startsWith("reject")) throw acp.RequestError.invalidParams(undefined, "this agent rejects that prompt");
    if (published) return publishedTurn(s, sid, words, client);
    const userId = fresh("ts_user");
    for (const block of params.prompt) {
      await say(client, sid, { sessionUpdate: "user_message_chunk", messageId: userId, content: block });
    }
    const agentId = fresh("ts_agent");
    if (words.startsWith("fail")) {
      await say(client, sid, { sessionUpdate: "agent_message_chunk", messageId: agentId, content: text("Trying...") });
      throw acp.RequestError.authRequired({ provider: "example" }, "the provider's credential expired");
    }
    if (words.startsWith("slow")) {
      await say(client, sid, { sessionUpdate: "agent_message_chunk", messageId: agentId, content: text("Working") });
      const toolCallId = fresh("ts_tool");
      await say(client, sid, { sessionUpdate: "tool_call", toolCallId, title: "Long search", kind: "search", status: "in_progress" });
      if (!s.cancelled) {
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, 20000);
          s.cancel = () => { clearTimeout(timer); resolve(); };
        });
      }
      s.cancel = null;
      await say(client, sid, { sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
      return { stopReason: "cancelled" };
    }
    await say(client, sid, { sessionUpdate: "agent_thought_chunk", messageId: fresh("ts_thought"), content: text("Reading the file first.") });
    const toolCallId = fresh("ts_tool");
    await say(client, sid, {
      sessionUpdate: "tool_call", toolCallId, title: "Read README.md", kind: "read", status: "pending",
      locations: [{ path: "/tmp/project/README.md", line: 1 }],
    });
    const permission = await client.request(acp.methods.client.session.requestPermission, {
      sessionId: sid,
      toolCall: { toolCallId, title: "Read README.md", kind: "read", status: "pending" },
      options: [
        { optionId: "allow", name: "Allow once", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    const allowed = permission.outcome.outcome === "selected" && permission.outcome.optionId === "allow";
    await say(client, sid, {
      sessionUpdate: "tool_call_update", toolCallId, status: allowed ? "completed" : "failed",
      content: [{ type: "content", content: text(allowed ? "# Project" : "not allowed") }],
    });
    await say(client, sid, {
      sessionUpdate: "plan",
      entries: [{ content: "Summarise the README", priority: "high", status: "completed" }],
    });
    await say(client, sid, { sessionUpdate: "agent_message_chunk", messageId: agentId, content: text(`You said: ${words}`) });
    return { stopReason: "end_turn" };
  });

async function publishedTurn(s, sid, words, client) {
  const chunk = (kind, t) => say(client, sid, { sessionUpdate: kind, content: text(t) });
  if (words.startsWith("fail")) {
    await chunk("agent_message_chunk", "Trying...");
    throw new acp.RequestError(-32603, "Internal error", { details: "the provider returned 500" });
  }
  if (words.startsWith("slow")) {
    // a permission request for a tool call no tool_call announced (gemini-cli, qwen-code)
    const asked = client.request(acp.methods.client.session.requestPermission, {
      sessionId: sid,
      toolCall: { toolCallId: fresh("ts_tool"), title: "Long search", kind: "search", status: "pending" },
      options: [{ optionId: "allow", name: "Allow once", kind: "allow_once" }],
    });
    await new Promise((resolve) => {
      if (s.cancelled) return resolve();
      const timer = setTimeout(resolve, 20000);
      s.cancel = () => { clearTimeout(timer); resolve(); };
    });
    s.cancel = null;
    asked.catch(() => {}); // it stops waiting, and cancels nothing
    return { stopReason: "cancelled" };
  }
  await chunk("agent_thought_chunk", "Reading the file first.");
  await chunk("agent_message_chunk", "Let me");
  await say(client, sid, { sessionUpdate: "available_commands_update", availableCommands: [{ name: "init", description: "Write notes" }] }, false);
  await chunk("agent_message_chunk", " read it.");
  const toolCallId = fresh("ts_tool");
  await say(client, sid, { sessionUpdate: "tool_call", toolCallId, title: "Read README.md", kind: "read", status: "pending" });
  const permission = await client.request(acp.methods.client.session.requestPermission, {
    sessionId: sid,
    toolCall: { toolCallId, title: "Read README.md", kind: "read", status: "pending" },
    options: [{ optionId: "allow", name: "Allow once", kind: "allow_once" }],
  });
  const allowed = permission.outcome.outcome === "selected";
  await say(client, sid, { sessionUpdate: "tool_call_update", toolCallId, status: allowed ? "completed" : "failed" });
  await chunk("agent_message_chunk", `You said: ${words}`);
  await say(client, sid, { sessionUpdate: "usage_update", used: null, size: 200000 }, false);
  return { stopReason: "end_turn" };
}

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
await connection.closed;
