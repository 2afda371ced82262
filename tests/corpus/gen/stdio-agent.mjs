// The corpus agent (agent.mjs) as a stdio process: one connection on stdin/stdout.
//
//   node stdio-agent.mjs
//
// With ACP_CORPUS_TAP=FILE it also appends what it reads and writes to FILE as
// transcript lines ({"conn":"stdio","from","msg"}, the bytes as they crossed),
// so a recording made outside the process can be compared with its own view.
import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

import { World, agentApp } from "./agent.mjs";
import { lines } from "./harness.mjs";

const tapFile = process.env.ACP_CORPUS_TAP;
const tap = (from) => (line) => {
  if (tapFile) {
    appendFileSync(tapFile, `{"conn":"stdio","from":"${from}","msg":${line}}\n`);
  }
  return line;
};

const input = Readable.toWeb(process.stdin).pipeThrough(lines(tap("client")));
const output = lines(tap("agent"));
output.readable.pipeTo(Writable.toWeb(process.stdout)).catch(() => {});
process.stderr.write("corpus agent: ready on stdio\n");
agentApp(new World(), "stdio").connect(acp.ndJsonStream(output.writable, input));
