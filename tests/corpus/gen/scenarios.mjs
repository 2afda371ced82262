// The scenarios: SDK clients driving the SDK agent. Each yields one conforming
// transcript; `describe` says what it covers (printed into tests/corpus/README.md).
import { Bench, settle } from "./harness.mjs";

const S = {};

function scenario(name, describe, body) {
  S[name] = {
    describe,
    async run() {
      const bench = new Bench();
      await body(bench);
      return bench.finish();
    },
  };
}

const rejected = (promise) =>
  promise.then(
    (value) => {
      throw new Error(`expected an error response, got ${JSON.stringify(value)}`);
    },
    (error) => error.code,
  );

function deferred() {
  let resolve;
  const promise = new Promise((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

// --- one connection, one session ---------------------------------------------

scenario("basic", "initialize, session/new, one prompt: echo, answer, idle end_turn", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "What is the capital of France?");
});

for (const ids of ["string", "digits", "huge", "negative"]) {
  scenario(`ids-${ids}`, `three turns with ${ids} request ids (rewritten by the relay; the SDK agent answers them)`, async (b) => {
    const c = await b.client("c1", { ids });
    const s = await c.newSession();
    await c.turn(s, "First question");
    await c.turn(s, "/perm run the tests");
    await c.turn(s, "Third question");
  });
}

scenario("two-turns", "two prompts in a row: the echo before the response, then after it", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "Question one");
  await c.turn(s, "Question two");
});

scenario("identical-prompts", "the same text twice gets two distinct messageIds", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  const a = await c.turn(s, "Run it again");
  const d = await c.turn(s, "Run it again");
  if (a.messageId === d.messageId) throw new Error("same messageId");
});

scenario("local-command", "a locally handled command: inserted, echoed, idle end_turn without model work", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "/cmd clear");
  await c.turn(s, "After the command");
});

scenario("streamed-echo", "the echo as user_message_chunk (a two-block prompt)", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, [
    { type: "text", text: "/stream Summarise" },
    { type: "resource_link", uri: "file:///work/project/README.md", name: "README.md" },
  ]);
});

scenario("rejected-prompt", "a prompt rejected before insertion (-32602, no echo), then a normal one", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  const code = await rejected(c.prompt(s, "/reject this"));
  if (code !== -32602) throw new Error(`code ${code}`);
  await c.turn(s, "A fine prompt");
});

scenario("updates-before-new-response", "the agent announces commands before the session/new response", async (b) => {
  const c = await b.client("c1", { agent: { announceCommands: true } });
  const s = await c.newSession();
  await c.turn(s, "/cmd");
});

scenario("notice", "a retried provider request (notice) inside the work", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "/notice");
});

// --- agent-to-client requests ----------------------------------------------------

scenario("permission-allow", "session/request_permission (requires_action), allowed: the tool runs", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  c.permissions.push("allow");
  await c.turn(s, "/perm");
});

scenario("permission-reject", "permission rejected: the tool call fails, the work ends end_turn", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  c.permissions.push("reject");
  await c.turn(s, "/perm");
});

scenario("permission-cancel", "session/cancel while a permission is pending: $/cancel_request from the agent, idle cancelled, the client answers cancelled", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  c.permissions.push("hold");
  const from = c.mark();
  const p = c.prompt(s, "/perm");
  await c.state(s, "requires_action", from);
  await c.cancel(s);
  await c.idle(s, from);
  await c.until((e) => e.kind === "cancelled-request");
  await p;
  await c.turn(s, "Next prompt after the cancel");
});

scenario("permission-cancel-client-first", "the client answers its permission cancelled right after session/cancel, without waiting for $/cancel_request", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  const sent = deferred();
  c.permissions.push(async () => {
    await sent.promise;
    return { outcome: { outcome: "cancelled" } };
  });
  const from = c.mark();
  const p = c.prompt(s, "/perm");
  await c.state(s, "requires_action", from);
  await c.cancel(s);
  sent.resolve();
  await c.idle(s, from);
  await p;
});

scenario("elicitation-accept", "elicitation/create (form) answered accept", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "/ask");
});

scenario("elicitation-cancelled", "session/cancel while an elicitation is pending: $/cancel_request, idle cancelled", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  c.elicitations.push("hold");
  const from = c.mark();
  const p = c.prompt(s, "/ask");
  await c.state(s, "requires_action", from);
  await c.cancel(s);
  await c.idle(s, from);
  await p;
  await c.until((e) => e.kind === "cancelled-request");
});

// --- failures --------------------------------------------------------------------

scenario("failure", "a tool call fails and the work ends idle stopReason error with the error object", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "/fail");
  await c.turn(s, "Try again");
});

scenario("failure-before-response", "work fails after insertion and before the response: error idle, then the success response", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "/failfirst");
});

// --- held prompts and cancellation ----------------------------------------------

scenario("held-prompts", "two prompts held while /slow runs, inserted in order when it ends", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  const from = c.mark();
  await c.prompt(s, "/slow");
  await c.state(s, "running", from);
  const p2 = c.prompt(s, "Held one");
  const p3 = c.prompt(s, "Held two");
  await settle();
  await c.tick(s, "finish");
  await p2;
  await p3;
  const last = c.mark();
  await c.idle(s, last);
});

scenario("held-prompt-cancel-request", "$/cancel_request withdraws a held prompt: -32800", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  const from = c.mark();
  await c.prompt(s, "/slow");
  await c.state(s, "running", from);
  const abort = new AbortController();
  const held = c.prompt(s, "Never mind", { cancellationSignal: abort.signal });
  await settle();
  abort.abort();
  const code = await rejected(held);
  if (code !== -32800) throw new Error(`code ${code}`);
  await c.tick(s, "finish");
  await c.idle(s, from);
});

scenario("cancel-running", "session/cancel of running work: the tool call is cancelled, idle cancelled", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  const from = c.mark();
  await c.prompt(s, "/slow");
  await c.state(s, "running", from);
  await settle();
  await c.cancel(s);
  await c.idle(s, from);
  await c.turn(s, "After the cancel");
});

scenario("tool-cancel", "tool_call/cancel of a cancellable tool call: accepted, confirmed cancelled; again: -32602", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  const from = c.mark();
  await c.prompt(s, "/slow");
  const announced = await c.until((e) => e.kind === "update" && e.update.capabilities?.cancel, from);
  const toolCallId = announced.update.toolCallId;
  await c.agent.request("tool_call/cancel", { sessionId: s, toolCallId });
  await c.until((e) => e.kind === "update" && e.update.toolCallId === toolCallId && e.update.status === "cancelled", from);
  const code = await rejected(c.agent.request("tool_call/cancel", { sessionId: s, toolCallId }));
  if (code !== -32602) throw new Error(`code ${code}`);
  await c.tick(s, "finish");
  await c.idle(s, from);
});

scenario("cancel-with-held-prompts", "session/cancel answers held prompts -32800 and cancels the work", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  const from = c.mark();
  await c.prompt(s, "/slow");
  await c.state(s, "running", from);
  const h1 = rejected(c.prompt(s, "Held A"));
  const h2 = rejected(c.prompt(s, "Held B"));
  await settle();
  await c.cancel(s);
  await c.idle(s, from);
  if ((await h1) !== -32800 || (await h2) !== -32800) throw new Error("held prompts not -32800");
});

scenario("cancel-idle", "session/cancel while idle: nothing to end, no update required", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "Done already");
  await c.cancel(s);
  await settle();
  await c.turn(s, "Still fine");
});

// --- background work and agent-initiated work --------------------------------

scenario("background", "a tool call moves to the background list; its final status, then the snapshot that drops it", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "/bg start the build");
  const from = c.mark();
  await c.tick(s, "background");
  await c.idle(s, from);
  await c.turn(s, "Is it done?");
});

scenario("background-survives-cancel", "session/cancel does not cover listed background work", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "/bg");
  const from = c.mark();
  await c.prompt(s, "/slow");
  await c.state(s, "running", from);
  await c.cancel(s);
  await c.idle(s, from);
  const later = c.mark();
  await c.tick(s, "background");
  await c.idle(s, later);
});

scenario("agent-initiated", "foreground work without a prompt: running, a message, idle", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "/bg");
  let from = c.mark();
  await c.tick(s, "background");
  await c.idle(s, from);
  from = c.mark();
  await c.tick(s, "initiate");
  await c.idle(s, from);
});

// --- several sessions and connections -----------------------------------------

scenario("two-sessions", "two sessions on one connection, each with its own msg_1", async (b) => {
  const c = await b.client("c1");
  const s1 = await c.newSession("/work/a");
  const s2 = await c.newSession("/work/b");
  await c.turn(s1, "In session one");
  await c.turn(s2, "In session two");
  await c.turn(s1, "Back to one");
});

scenario("two-sessions-interleaved", "two sessions working at once on one connection", async (b) => {
  const c = await b.client("c1", { ids: "string" });
  const s1 = await c.newSession("/work/a");
  const s2 = await c.newSession("/work/b");
  const from = c.mark();
  await c.prompt(s1, "/slow");
  await c.state(s1, "running", from);
  await c.turn(s2, "Meanwhile in two");
  c.permissions.push("allow");
  await c.turn(s2, "/perm");
  await c.tick(s1, "finish");
  await c.idle(s1, from);
});

scenario("two-connections", "a second connection resumes the session (no replay); both see every update", async (b) => {
  const c1 = await b.client("c1");
  const c2 = await b.client("c2", { ids: "huge" });
  const s = await c1.newSession();
  await c1.turn(s, "Hello from one");
  await c2.resume(s);
  const from = c2.mark();
  await c1.turn(s, "Seen by both");
  await c2.idle(s, from);
  await c2.turn(s, "Hello from two");
});

scenario("resume-replay", "the first connection drops; a new one resumes with replay: same messageIds, then the snapshot", async (b) => {
  const c1 = await b.client("c1");
  const s = await c1.newSession();
  await c1.turn(s, "Remember this");
  c1.permissions.push("allow");
  await c1.turn(s, "/perm");
  await c1.disconnect();
  const c2 = await b.client("c2");
  await c2.resume(s, true);
  await c2.turn(s, "Do you remember?");
});

scenario("resume-replay-chunked", "replay of a streamed user message: user_message content [] first, then its chunks", async (b) => {
  const c1 = await b.client("c1");
  const s = await c1.newSession();
  await c1.turn(s, "/stream one");
  await c1.turn(s, "plain two");
  await c1.disconnect();
  const c2 = await b.client("c2", { ids: "string" });
  await c2.resume(s, true);
  await c2.turn(s, "three");
});

scenario("resume-replay-same-connection", "the connection that saw the work resumes with replay: its ended tool calls come back as history, then the snapshot", async (b) => {
  const c1 = await b.client("c1");
  const s = await c1.newSession();
  c1.permissions.push("allow");
  await c1.turn(s, "/perm");
  await c1.turn(s, "/fail");
  await c1.resume(s, true);
  await c1.turn(s, "After the replay");
});

scenario("resume-while-running", "a connection resumes while work runs: the snapshot says running", async (b) => {
  const c1 = await b.client("c1");
  const s = await c1.newSession();
  const from = c1.mark();
  await c1.prompt(s, "/slow");
  await c1.state(s, "running", from);
  const c2 = await b.client("c2");
  await c2.resume(s);
  const from2 = c2.mark();
  await c1.tick(s, "finish");
  await c1.idle(s, from);
  await c2.idle(s, from2);
});

scenario("resume-background", "resume reports the background list in its snapshot", async (b) => {
  const c1 = await b.client("c1");
  const s = await c1.newSession();
  await c1.turn(s, "/bg");
  await c1.disconnect();
  const c2 = await b.client("c2");
  await c2.resume(s, true);
  const from = c2.mark();
  await c2.tick(s, "background");
  await c2.idle(s, from);
});

scenario("resume-bad-cursor", "an unsupported replay cursor is rejected -32602; a plain resume works", async (b) => {
  const c1 = await b.client("c1");
  const s = await c1.newSession();
  await c1.turn(s, "Something");
  await c1.disconnect();
  const c2 = await b.client("c2");
  const code = await rejected(c2.resume(s, { type: "_bookmark", at: "msg_1" }));
  if (code !== -32602) throw new Error(`code ${code}`);
  await c2.resume(s);
  await c2.turn(s, "Resumed");
});

// --- session/close ------------------------------------------------------------------

scenario("close-idle", "session/close of an idle session", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "Bye");
  await c.close(s);
});

scenario("close-running", "session/close cancels running work (idle cancelled before the close response) and a held prompt (-32800)", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  const from = c.mark();
  await c.prompt(s, "/slow");
  await c.state(s, "running", from);
  const held = rejected(c.prompt(s, "Held"));
  await settle();
  await c.close(s);
  if ((await held) !== -32800) throw new Error("held prompt not -32800");
});

scenario("close-pending-permission", "session/close with a permission pending: $/cancel_request, idle cancelled, then the close response", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  c.permissions.push("hold");
  const from = c.mark();
  await c.prompt(s, "/perm");
  await c.state(s, "requires_action", from);
  await c.close(s);
  await c.until((e) => e.kind === "cancelled-request");
  await settle();
});

scenario("close-background", "session/close stops background work: its final status before the close response", async (b) => {
  const c = await b.client("c1");
  const s = await c.newSession();
  await c.turn(s, "/bg");
  await c.close(s);
  const s2 = await c.newSession();
  await c.turn(s2, "A new session");
});

// --- long ones ---------------------------------------------------------------------

const MIX = ["Question", "/perm", "/cmd", "/fail", "/notice", "/ask", "/stream part", "Another question"];

scenario("long-conversation", "forty turns of every kind on one session (hundreds of lines)", async (b) => {
  const c = await b.client("c1", { ids: "string" });
  const s = await c.newSession();
  for (let i = 0; i < 40; i++) {
    const what = MIX[i % MIX.length];
    if (what === "/perm") c.permissions.push(i % 16 === 1 ? "reject" : "allow");
    await c.turn(s, `${what} ${i}`);
  }
});

scenario("long-multi-connection", "three connections, two sessions, resumes, cancels, background work, closes (hundreds of lines)", async (b) => {
  const c1 = await b.client("c1");
  const c2 = await b.client("c2", { ids: "huge" });
  const s1 = await c1.newSession("/work/a");
  const s2 = await c2.newSession("/work/b");
  for (let i = 0; i < 6; i++) {
    await c1.turn(s1, `${MIX[i]} on one ${i}`.replace("/perm", "/cmd"));
    if (MIX[i] === "/perm") c2.permissions.push("allow");
    await c2.turn(s2, `${MIX[(i + 3) % MIX.length]} on two ${i}`);
  }
  await c2.resume(s1);
  let from = c1.mark();
  await c1.prompt(s1, "/slow");
  await c1.state(s1, "running", from);
  await c2.turn(s2, "/bg");
  await c1.cancel(s1);
  await c1.idle(s1, from);
  from = c2.mark();
  await c2.tick(s2, "background");
  await c2.idle(s2, from);
  await c1.disconnect();
  const c3 = await b.client("c3", { ids: "negative" });
  await c3.resume(s1, true);
  await c3.resume(s2, true);
  for (let i = 0; i < 6; i++) {
    await c3.turn(i % 2 ? s1 : s2, `${MIX[(i + 5) % MIX.length]} on three ${i}`.replace("/perm", "/cmd").replace("/ask", "/cmd"));
  }
  await c3.close(s2);
  await c2.turn(s1, "Still here");
});

scenario("many-sessions", "five sessions on two connections, prompts interleaved", async (b) => {
  const c1 = await b.client("c1", { ids: "digits" });
  const c2 = await b.client("c2");
  const sessions = [];
  for (let i = 0; i < 5; i++) {
    sessions.push([i % 2 ? c2 : c1, await (i % 2 ? c2 : c1).newSession(`/work/s${i}`)]);
  }
  for (let round = 0; round < 3; round++) {
    for (const [client, s] of sessions) {
      await client.turn(s, `round ${round}`);
    }
  }
});

export const SCENARIOS = S;
