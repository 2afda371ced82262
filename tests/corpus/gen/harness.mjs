// The test bench: in-memory NDJSON connections between SDK clients and the SDK
// agent, a tap recording what crosses each connection as the agent sees it,
// and a relay that rewrites request ids so that the agent really answers
// string, negative and very large integer ids.
//
// Transcript lines are `{"conn","from","msg"}` with the message bytes copied
// verbatim from the wire (never re-serialised), in the order the agent reads
// and writes them.
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

import { World, agentApp } from "./agent.mjs";

const { methods } = acp;

export const settle = async (n = 20) => {
  for (let i = 0; i < n; i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
};

export class Tap {
  constructor() {
    this.lines = [];
  }
  record(conn, from, raw) {
    this.lines.push(`{"conn":${JSON.stringify(conn)},"from":"${from}","msg":${raw}}`);
  }
  closed(conn) {
    this.lines.push(`{"conn":${JSON.stringify(conn)},"event":"closed"}`);
  }
  text() {
    return this.lines.map((line) => line + "\n").join("");
  }
}

// Request ids as the relay rewrites the client's ids 0, 1, 2 ...: raw JSON
// text. "huge" ids are beyond 2^53 and written as JavaScript writes them, so
// the SDK agent (JSON.parse, JSON.stringify) answers exactly the same digits.
function idMapper(kind) {
  switch (kind) {
    case "string":
      return (n) => JSON.stringify(`req-${n}`);
    case "digits":
      return (n) => JSON.stringify(String(n)); // the string "1" is not the integer 1
    case "negative":
      return (n) => String(-1 - n);
    case "huge":
      return (n) => {
        const raw = String(Number(1152921504606846976n + 1000000000000n * BigInt(n)));
        if (JSON.stringify(JSON.parse(raw)) !== raw || Number.isSafeInteger(JSON.parse(raw))) {
          throw new Error(`huge id ${raw} does not round-trip`);
        }
        return raw;
      };
    case "unsafe":
      // 2^53 + 1 + 2n: not representable as a double; JSON.parse rounds it.
      return (n) => String(9007199254740993n + 2n * BigInt(n));
    default:
      return null;
  }
}

// Rewrites the client's request ids on the way to the agent (its requests and
// its $/cancel_request) and back on the agent's responses. Textual: the SDK
// writes `{"jsonrpc":"2.0","id":...` first, so the first `"id":` is the top one.
class Relay {
  constructor(kind) {
    this.map = idMapper(kind);
    this.back = new Map(); // rewritten raw id -> the client's raw id
  }
  toAgent(line) {
    if (!this.map) {
      return line;
    }
    const msg = JSON.parse(line);
    if (msg.method !== undefined && msg.id !== undefined) {
      const raw = this.map(msg.id);
      this.back.set(raw, JSON.stringify(msg.id));
      return swap(line, `"id":${JSON.stringify(msg.id)}`, `"id":${raw}`);
    }
    if (msg.method === "$/cancel_request") {
      const id = msg.params.requestId;
      return swap(line, `"requestId":${JSON.stringify(id)}`, `"requestId":${this.map(id)}`);
    }
    return line;
  }
  toClient(line) {
    if (!this.map) {
      return line;
    }
    const msg = JSON.parse(line);
    const m = /^\{"jsonrpc":"2\.0","id":("(?:[^"\\]|\\.)*"|-?\d+)/.exec(line);
    if (msg.method === undefined && m && this.back.has(m[1])) {
      return swap(line, `"id":${m[1]}`, `"id":${this.back.get(m[1])}`);
    }
    return line;
  }
}

function swap(line, before, after) {
  const i = line.indexOf(before);
  if (i < 0) {
    throw new Error(`relay: no ${before} in ${line}`);
  }
  return line.slice(0, i) + after + line.slice(i + before.length);
}

export function lines(onLine) {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = "";
  return new TransformStream({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      let i;
      while ((i = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        if (line.trim()) {
          controller.enqueue(encoder.encode(onLine(line) + "\n"));
        }
      }
    },
  });
}

// A client connection to the agent through the tap (and the relay).
export function pipe(tap, label, ids) {
  const relay = new Relay(ids);
  const up = lines((line) => {
    const seen = relay.toAgent(line);
    tap.record(label, "client", seen);
    return seen;
  });
  const down = lines((line) => {
    tap.record(label, "agent", line);
    return relay.toClient(line);
  });
  return {
    agentStream: acp.ndJsonStream(down.writable, up.readable),
    clientStream: acp.ndJsonStream(up.writable, down.readable),
  };
}

// ---------------------------------------------------------------------------
// A scripted SDK client

export class TestClient {
  constructor(bench, label, options = {}) {
    this.bench = bench;
    this.label = label;
    this.events = [];
    this.waiters = [];
    this.permissions = []; // answers for session/request_permission, in order
    this.elicitations = [];
    const app = acp.client({ name: `corpus-client-${label}` });
    app.onNotification(methods.client.session.update, async ({ params }) => {
      this.push({ kind: "update", sessionId: params.sessionId, update: params.update });
    });
    app.onRequest(methods.client.session.requestPermission, async ({ params, signal }) => {
      this.push({ kind: "permission", params });
      const policy = this.permissions.shift() ?? "allow";
      return answerPermission(policy, signal, this);
    });
    app.onRequest(methods.client.elicitation.create, async ({ params, signal }) => {
      this.push({ kind: "elicitation", params });
      const policy = this.elicitations.shift() ?? "accept";
      if (policy === "hold") {
        await aborted(signal);
        this.push({ kind: "cancelled-request" });
        return { action: "cancel" };
      }
      if (policy === "cancel") {
        return { action: "cancel" };
      }
      return { action: "accept", content: { branch: "main" } };
    });
    this.app = app;
    this.options = options;
  }

  push(event) {
    this.events.push(event);
    for (const waiter of [...this.waiters]) {
      if (waiter.test(event, this.events.length - 1)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
  }

  mark() {
    return this.events.length;
  }

  until(predicate, from = 0) {
    for (let i = from; i < this.events.length; i++) {
      if (predicate(this.events[i])) {
        return Promise.resolve(this.events[i]);
      }
    }
    return new Promise((resolve) => {
      this.waiters.push({ test: (event, i) => i >= from && predicate(event), resolve });
    });
  }

  idle(sessionId, from) {
    return this.until((e) => e.kind === "update" && e.sessionId === sessionId && isState(e.update, "idle"), from);
  }

  state(sessionId, state, from) {
    return this.until((e) => e.kind === "update" && e.sessionId === sessionId && isState(e.update, state), from);
  }

  async open() {
    const { agentStream, clientStream } = pipe(this.bench.tap, this.label, this.options.ids);
    this.agentApp = agentApp(this.bench.world, this.label, this.options.agent ?? {});
    this.agentConnection = this.agentApp.connect(agentStream);
    return this.attach(clientStream);
  }

  // Connect over any stream (a child process's stdio, for instance) and initialize.
  async attach(clientStream) {
    this.connection = this.app.connect(clientStream);
    this.agent = this.connection.agent;
    await this.agent.request(methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: `corpus-client-${this.label}`, version: "1.0.0" },
      capabilities: { elicitation: { form: {} } },
    });
    return this;
  }

  async newSession(cwd = "/work/project") {
    const response = await this.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    return response.sessionId;
  }

  prompt(sessionId, text, options) {
    const blocks = Array.isArray(text) ? text : [{ type: "text", text }];
    return this.agent.request(methods.agent.session.prompt, { sessionId, prompt: blocks }, options);
  }

  // Prompt and wait for the response and the idle that ends the work.
  async turn(sessionId, text) {
    const from = this.mark();
    const response = await this.prompt(sessionId, text);
    await this.idle(sessionId, from);
    return response;
  }

  cancel(sessionId) {
    return this.agent.notify(methods.agent.session.cancel, { sessionId });
  }

  tick(sessionId, what) {
    return this.agent.notify("_corpus/tick", { sessionId, what });
  }

  resume(sessionId, replay, cwd = "/work/project") {
    const params = { sessionId, cwd };
    if (replay === true) {
      params.replayFrom = { type: "start" };
    } else if (replay !== undefined && replay !== false) {
      params.replayFrom = replay;
    }
    return this.agent.request(methods.agent.session.resume, params);
  }

  close(sessionId) {
    return this.agent.request(methods.agent.session.close, { sessionId });
  }

  async disconnect() {
    await settle();
    this.connection.close();
    this.agentConnection.close();
    await settle();
    this.bench.tap.closed(this.label);
  }
}

function isState(update, state) {
  return update.sessionUpdate === "state_update" && update.state === state;
}

function aborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
    } else {
      signal.addEventListener("abort", () => resolve(), { once: true });
    }
  });
}

async function answerPermission(policy, signal, client) {
  if (policy === "hold") {
    // Wait for the agent's $/cancel_request, then answer cancelled.
    await aborted(signal);
    client.push({ kind: "cancelled-request" });
    return { outcome: { outcome: "cancelled" } };
  }
  if (typeof policy === "function") {
    return policy(signal);
  }
  if (policy === "cancelled") {
    return { outcome: { outcome: "cancelled" } };
  }
  return { outcome: { outcome: "selected", optionId: policy } };
}

export class Bench {
  constructor() {
    this.tap = new Tap();
    this.world = new World();
    this.clients = [];
  }
  async client(label, options) {
    const client = new TestClient(this, label, options);
    this.clients.push(client);
    return client.open();
  }
  async finish() {
    await settle(50);
    return this.tap.text();
  }
}
