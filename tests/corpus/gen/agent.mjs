// A small but complete ACP v2 agent written on the official TypeScript SDK
// (@agentclientprotocol/sdk@2.4.0, experimental v2 `agent()` app).
//
// One `World` is one agent process: its sessions are shared by every
// connection it serves (`agentApp(world, label)` builds the app for one
// connection). What a prompt does is chosen by its first word:
//
//   (text)      running, the echo, two agent_message_chunk, idle end_turn
//   /cmd        a locally handled command: inserted and echoed, idle end_turn
//   /perm       a tool call that asks session/request_permission (requires_action);
//               allowed -> runs and completes; rejected -> failed; cancelled -> cancelled
//   /ask        elicitation/create (form) for input; accept -> answer; cancel -> cancelled
//   /fail       a tool call fails and the work ends idle stopReason error (with the error)
//   /failfirst  fails after insertion but before the response: still a success response
//   /bg         a tool call moves to the background list; the idle lists it
//   /slow       foreground work that runs until `_corpus/tick` {what: "finish"} or a cancel;
//               its tool call advertises capabilities.cancel (tool_call/cancel)
//   /notice     a retried provider request (notice), then the answer
//   /reject     rejected before insertion: -32602, no echo
//   /stream     the echo as user_message_chunk instead of a whole user_message
//
// Prompts that arrive while foreground work runs are held and inserted in the
// order received when it ends. `$/cancel_request` withdraws a held prompt
// (-32800); `session/cancel` and `session/close` answer held prompts with
// -32800, cancel the foreground work (its pending permission requests and
// elicitations with `$/cancel_request`, not waiting for the answers) and end it
// idle cancelled. `session/resume` attaches a connection, replays retained
// history when asked (`replayFrom: {type: "start"}`; other cursors -32602):
// the messages, and each tool call once, where it started, with its latest
// fields (a replayed tool call of ended work is history, not live work), then
// sends a current-state snapshot before responding. The extension
// notification `_corpus/tick` {sessionId, what} lets a scenario drive time:
// "finish" ends /slow work, "background" finishes the background tool calls,
// "initiate" starts agent-initiated foreground work.
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const { RequestError, methods } = acp;

export class World {
  constructor(options = {}) {
    this.sessions = new Map();
    this.nextSession = 1;
    // Echo a prompt before its response (true) or after it (false); alternates
    // per session so both orders occur.
    this.options = options;
  }
}

class Session {
  constructor(id, cwd) {
    this.id = id;
    this.cwd = cwd;
    this.conns = []; // attached connections, in attach order
    // retained history: {type: "user"|"agent", messageId, content, chunked} or {type: "tool", fields}
    this.history = [];
    this.toolHistory = new Map(); // toolCallId -> its history entry
    this.state = "idle";
    this.stop = null; // stop reason of the last idle that ended work
    this.background = null; // null: not reporting background work; else the listed items
    this.bgTools = new Map(); // toolCallId -> status
    this.toolTitles = new Map();
    this.work = null;
    this.held = [];
    this.counters = { user: 0, agent: 0, tool: 0 };
    this.echoFirst = false;
  }
  nextId(kind) {
    this.counters[kind] += 1;
    return kind === "tool" ? `call_${this.counters.tool}` : `msg_${this.counters[kind]}`;
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

async function broadcast(session, update) {
  if (update.sessionUpdate === "tool_call_update") {
    retainTool(session, update);
  }
  for (const conn of [...session.conns]) {
    // A connection that went away is dropped, not an error of the work.
    await conn.client.notify(methods.client.session.update, { sessionId: session.id, update }).catch(() => {
      session.conns = session.conns.filter((c) => c !== conn);
    });
  }
}

// A tool call is retained where it started; later updates patch its fields.
function retainTool(session, update) {
  const { sessionUpdate, ...fields } = update;
  let entry = session.toolHistory.get(update.toolCallId);
  if (!entry) {
    entry = { type: "tool", fields: {} };
    session.toolHistory.set(update.toolCallId, entry);
    session.history.push(entry);
  }
  Object.assign(entry.fields, fields);
}

async function sendState(session, state, extra = {}) {
  const update = { sessionUpdate: "state_update", state, ...extra };
  if (session.background !== null) {
    update.background = session.background.map((item) => ({ ...item }));
  }
  session.state = state;
  if (state === "idle" && extra.stopReason) {
    session.stop = extra.stopReason;
  }
  await broadcast(session, update);
}

function text(prompt) {
  const first = prompt.find((block) => block.type === "text");
  return first ? first.text : "";
}

class Cancelled extends Error {}

function checkpoint(work) {
  if (work.abort.signal.aborted) {
    throw new Cancelled();
  }
}

function waitFor(work, key) {
  // Resolves when `_corpus/tick` names `key`; rejects when the work is cancelled.
  return new Promise((resolve, reject) => {
    if (work.abort.signal.aborted) {
      reject(new Cancelled());
      return;
    }
    work.waiters.set(key, resolve);
    work.abort.signal.addEventListener("abort", () => reject(new Cancelled()), { once: true });
  });
}

async function toolUpdate(session, work, toolCallId, fields) {
  if (work && fields.status) {
    work.tools.set(toolCallId, fields.status);
  }
  await broadcast(session, { sessionUpdate: "tool_call_update", toolCallId, ...fields });
}

async function agentText(session, chunks) {
  const messageId = session.nextId("agent");
  for (const chunk of chunks) {
    await broadcast(session, {
      sessionUpdate: "agent_message_chunk",
      messageId,
      content: { type: "text", text: chunk },
    });
  }
  session.history.push({ type: "agent", messageId, content: chunks.map((t) => ({ type: "text", text: t })) });
}

// ---------------------------------------------------------------------------
// Foreground work

function startWork(session, body) {
  const work = { abort: new AbortController(), tools: new Map(), waiters: new Map(), cancelled: false };
  session.work = work;
  work.done = (async () => {
    let stop = { stopReason: "end_turn" };
    try {
      await body(work);
      if (work.result) {
        stop = work.result;
      }
    } catch (error) {
      if (!(error instanceof Cancelled) && !work.cancelled) {
        throw error;
      }
      // Cancelled: every unfinished tool call of the work ends cancelled.
      for (const [toolCallId, status] of work.tools) {
        if (!["completed", "failed", "cancelled"].includes(status)) {
          await toolUpdate(session, work, toolCallId, { status: "cancelled" });
        }
      }
      stop = { stopReason: "cancelled" };
    }
    await sendState(session, "idle", stop);
    session.work = null;
    if (work.afterIdle) {
      await work.afterIdle();
    }
    await insertHeld(session);
  })();
  return work;
}

async function cancelWork(session) {
  for (const held of session.held.splice(0)) {
    held.reject(RequestError.requestCancelled());
  }
  const work = session.work;
  if (work && !work.cancelled) {
    work.cancelled = true;
    work.abort.abort();
    await work.done;
  }
}

async function insertHeld(session) {
  while (!session.work && session.held.length > 0 && !session.closed) {
    const held = session.held.shift();
    await insert(session, held.conn, held.prompt, held.resolve);
  }
}

// Insert a prompt: the echo and the response (in either order), then its work.
async function insert(session, conn, prompt, respond) {
  const body = text(prompt);
  const messageId = session.nextId("user");
  const chunked = body.startsWith("/stream");
  session.history.push({ type: "user", messageId, content: prompt, chunked });
  const echo = async () => {
    if (chunked) {
      for (const block of prompt) {
        await broadcast(session, { sessionUpdate: "user_message_chunk", messageId, content: block });
      }
    } else {
      await broadcast(session, { sessionUpdate: "user_message", messageId, content: prompt });
    }
  };
  session.echoFirst = !session.echoFirst;
  const command = body.split(/\s+/)[0];
  if (command === "/failfirst") {
    // Foreground work starts before insertion (running may precede it), fails
    // after insertion, and the response still succeeds: after the error idle.
    await sendState(session, "running");
    const work = startWork(session, async (w) => {
      await echo();
      w.result = { stopReason: "error", error: { code: -32000, message: "Authentication required" } };
    });
    work.afterIdle = async () => respond({ messageId });
    return;
  }
  if (session.echoFirst) {
    await echo();
    respond({ messageId });
  } else {
    respond({ messageId });
    await tick();
    await echo();
  }
  startWork(session, (work) => run(session, conn, work, command));
}

async function run(session, conn, work, command) {
  await sendState(session, "running");
  checkpoint(work);
  switch (command) {
    case "/cmd":
      return;
    case "/perm": {
      const toolCallId = session.nextId("tool");
      await toolUpdate(session, work, toolCallId, { title: "Run the tests", kind: "execute", status: "pending" });
      const asked = conn.client.request(
        methods.client.session.requestPermission,
        {
          sessionId: session.id,
          title: "Run the tests?",
          subject: { type: "tool_call", toolCall: { toolCallId } },
          options: [
            { optionId: "allow", name: "Allow", kind: "allow_once" },
            { optionId: "reject", name: "Reject", kind: "reject_once" },
          ],
        },
        { cancellationSignal: work.abort.signal, stopWaitingOnCancel: true },
      );
      await sendState(session, "requires_action");
      let answer;
      try {
        answer = await asked;
      } catch (error) {
        throw new Cancelled();
      }
      checkpoint(work);
      const outcome = answer.outcome;
      if (outcome.outcome === "selected" && outcome.optionId === "allow") {
        await sendState(session, "running");
        await toolUpdate(session, work, toolCallId, { status: "in_progress" });
        await toolUpdate(session, work, toolCallId, {
          status: "completed",
          content: [{ type: "content", content: { type: "text", text: "12 passed" } }],
        });
        await agentText(session, ["The tests pass."]);
      } else if (outcome.outcome === "cancelled") {
        throw new Cancelled();
      } else {
        await sendState(session, "running");
        await toolUpdate(session, work, toolCallId, { status: "failed" });
        await agentText(session, ["Not running the tests."]);
      }
      return;
    }
    case "/ask": {
      const asked = conn.client.request(
        methods.client.elicitation.create,
        {
          mode: "form",
          sessionId: session.id,
          message: "Which branch?",
          requestedSchema: { type: "object", properties: { branch: { type: "string" } }, required: ["branch"] },
        },
        { cancellationSignal: work.abort.signal, stopWaitingOnCancel: true },
      );
      await sendState(session, "requires_action");
      let answer;
      try {
        answer = await asked;
      } catch (error) {
        throw new Cancelled();
      }
      checkpoint(work);
      if (answer.action === "accept") {
        await sendState(session, "running");
        await agentText(session, [`Using ${answer.content?.branch ?? "main"}.`]);
      } else {
        throw new Cancelled();
      }
      return;
    }
    case "/fail": {
      const toolCallId = session.nextId("tool");
      await toolUpdate(session, work, toolCallId, { title: "Fetch the page", kind: "fetch", status: "in_progress" });
      await toolUpdate(session, work, toolCallId, { status: "failed" });
      work.result = { stopReason: "error", error: { code: -32603, message: "Internal error", data: { provider: "overloaded" } } };
      return;
    }
    case "/bg": {
      const toolCallId = session.nextId("tool");
      await toolUpdate(session, null, toolCallId, { title: "Watch the build", kind: "execute", status: "in_progress" });
      session.bgTools.set(toolCallId, "in_progress");
      session.toolTitles.set(toolCallId, "Watch the build");
      if (session.background === null) {
        session.background = [];
      }
      session.background.push({ type: "tool_call", toolCallId });
      await agentText(session, ["The build runs in the background."]);
      return;
    }
    case "/slow": {
      const toolCallId = session.nextId("tool");
      await toolUpdate(session, work, toolCallId, {
        title: "Index the repository",
        kind: "search",
        status: "in_progress",
        capabilities: { cancel: {} },
      });
      await agentText(session, ["Indexing..."]);
      await waitFor(work, "finish");
      if (work.tools.get(toolCallId) === "in_progress") {
        await toolUpdate(session, work, toolCallId, { status: "completed" });
      }
      return;
    }
    case "/notice": {
      await broadcast(session, {
        sessionUpdate: "notice",
        severity: "warning",
        title: "Provider request failed; retrying",
      });
      await agentText(session, ["Answer after a retry."]);
      return;
    }
    default:
      await agentText(session, ["Hello", ", world."]);
  }
}

async function finishBackground(session) {
  for (const [toolCallId, status] of session.bgTools) {
    if (status === "in_progress") {
      session.bgTools.set(toolCallId, "completed");
      await broadcast(session, { sessionUpdate: "tool_call_update", toolCallId, status: "completed" });
    }
  }
  session.background = (session.background ?? []).filter(
    (item) => item.type !== "tool_call" || session.bgTools.get(item.toolCallId) === "in_progress",
  );
  // A repeated snapshot: the state does not change, the list does.
  const extra = session.state === "idle" && session.stop ? { stopReason: session.stop } : {};
  await sendState(session, session.state, extra);
}

// ---------------------------------------------------------------------------
// The app for one connection

export function agentApp(world, label, hooks = {}) {
  const conn = { label, client: null, sessions: new Set() };
  const app = acp.agent({ name: `corpus-agent-${label}` });

  const lookup = (sessionId, attached = true) => {
    const session = world.sessions.get(sessionId);
    if (!session || session.closed) {
      throw RequestError.sessionNotFound(sessionId);
    }
    if (attached && !session.conns.includes(conn)) {
      throw RequestError.invalidParams({ sessionId }, "session not open on this connection");
    }
    return session;
  };

  app.onConnect((connection) => {
    conn.client = connection.client;
    connection.closed.then(() => {
      for (const session of world.sessions.values()) {
        session.conns = session.conns.filter((c) => c !== conn);
      }
    });
  });

  app.onRequest(methods.agent.initialize, async () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "corpus-agent", title: "Corpus agent (acp-lifecycle)", version: "1.0.0" },
    capabilities: { session: {} },
  }));

  app.onRequest(methods.agent.session.new, async ({ params }) => {
    const session = new Session(`sess_${world.nextSession++}`, params.cwd);
    world.sessions.set(session.id, session);
    session.conns.push(conn);
    conn.sessions.add(session.id);
    if (hooks.announceCommands) {
      // Updates may arrive before the session/new response.
      await broadcast(session, {
        sessionUpdate: "available_commands_update",
        availableCommands: [{ type: "command", name: "cmd", description: "A local command" }],
      });
    }
    return { sessionId: session.id };
  });

  app.onRequest(methods.agent.session.prompt, async ({ params, signal }) => {
    const session = lookup(params.sessionId);
    const body = text(params.prompt);
    if (body.startsWith("/reject")) {
      throw RequestError.invalidParams({ reason: "rejected by the corpus agent" });
    }
    return new Promise((resolve, reject) => {
      if (session.work) {
        const held = { conn, prompt: params.prompt, resolve, reject };
        session.held.push(held);
        signal.addEventListener(
          "abort",
          () => {
            const i = session.held.indexOf(held);
            if (i >= 0) {
              session.held.splice(i, 1);
              reject(RequestError.requestCancelled());
            }
          },
          { once: true },
        );
        return;
      }
      insert(session, conn, params.prompt, resolve).catch(reject);
    });
  });

  app.onNotification(methods.agent.session.cancel, async ({ params }) => {
    const session = world.sessions.get(params.sessionId);
    if (session && !session.closed) {
      await cancelWork(session);
    }
  });

  app.onRequest(methods.agent.session.close, async ({ params }) => {
    const session = world.sessions.get(params.sessionId);
    if (!session || session.closed) {
      return {};
    }
    await cancelWork(session);
    for (const [toolCallId, status] of session.bgTools) {
      if (status === "in_progress") {
        session.bgTools.set(toolCallId, "cancelled");
        await broadcast(session, { sessionUpdate: "tool_call_update", toolCallId, status: "cancelled" });
      }
    }
    session.closed = true;
    session.conns = [];
    return {};
  });

  app.onRequest(methods.agent.toolCall.cancel, async ({ params }) => {
    const session = lookup(params.sessionId);
    const work = session.work;
    const status = work?.tools.get(params.toolCallId);
    if (status === undefined || ["completed", "failed", "cancelled"].includes(status)) {
      throw RequestError.invalidParams({ toolCallId: params.toolCallId }, "unknown or final tool call");
    }
    // Accepted: answer, then confirm with the final status. The work goes on.
    work.tools.set(params.toolCallId, "cancelling");
    setImmediate(() => toolUpdate(session, work, params.toolCallId, { status: "cancelled" }));
    return {};
  });

  app.onRequest(methods.agent.session.resume, async ({ params }) => {
    const session = lookup(params.sessionId, false);
    const from = params.replayFrom;
    if (from != null && from.type !== "start") {
      throw RequestError.invalidParams({ replayFrom: from }, "unsupported replay cursor");
    }
    if (!session.conns.includes(conn)) {
      session.conns.push(conn);
    }
    conn.sessions.add(session.id);
    const send = (update) => conn.client.notify(methods.client.session.update, { sessionId: session.id, update });
    if (from != null) {
      for (const entry of session.history) {
        if (entry.type === "agent") {
          await send({ sessionUpdate: "agent_message", messageId: entry.messageId, content: entry.content });
        } else if (entry.type === "tool") {
          // A finished tool call can no longer be cancelled: its replay advertises nothing.
          const { capabilities, ...fields } = entry.fields;
          const final = ["completed", "failed", "cancelled"].includes(fields.status);
          await send({ sessionUpdate: "tool_call_update", ...(final ? fields : entry.fields) });
        } else if (entry.chunked) {
          await send({ sessionUpdate: "user_message", messageId: entry.messageId, content: [] });
          for (const block of entry.content) {
            await send({ sessionUpdate: "user_message_chunk", messageId: entry.messageId, content: block });
          }
        } else {
          await send({ sessionUpdate: "user_message", messageId: entry.messageId, content: entry.content });
        }
      }
    }
    // Background items reference entities the client tracks: announce them to
    // this connection before the snapshot that lists them (unless just replayed).
    for (const item of session.background ?? []) {
      if (item.type === "tool_call" && !(from != null && session.toolHistory.has(item.toolCallId))) {
        await send({
          sessionUpdate: "tool_call_update",
          toolCallId: item.toolCallId,
          title: session.toolTitles.get(item.toolCallId),
          status: session.bgTools.get(item.toolCallId),
        });
      }
    }
    const snapshot = { sessionUpdate: "state_update", state: session.state };
    if (session.state === "idle" && session.stop) {
      snapshot.stopReason = session.stop;
    }
    if (session.background !== null) {
      snapshot.background = session.background.map((item) => ({ ...item }));
    }
    await send(snapshot);
    return {};
  });

  app.onNotification("_corpus/tick", (p) => p, async ({ params }) => {
    const session = world.sessions.get(params.sessionId);
    if (!session || session.closed) {
      return;
    }
    if (params.what === "finish" && session.work) {
      session.work.waiters.get("finish")?.();
    } else if (params.what === "background") {
      await finishBackground(session);
    } else if (params.what === "initiate" && !session.work) {
      // Agent-initiated foreground work: no prompt, no user message.
      startWork(session, async (work) => {
        await sendState(session, "running");
        checkpoint(work);
        await agentText(session, ["The build finished: all green."]);
      });
    }
  });

  return app;
}
