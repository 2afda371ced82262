// Regenerates the conforming transcripts of tests/corpus/conforming/ from
// scenarios that run SDK clients against the SDK agent of agent.mjs.
//
//   cd tests/corpus/gen && npm ci && node generate.mjs [--out DIR] [NAME ...]
//
// (or `python tests/corpus/regenerate.py`, which also rebuilds the violating
// transcripts from these). Every scenario is deterministic: the same SDK
// version gives the same bytes.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { SCENARIOS } from "./scenarios.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const at = argv.indexOf("--out");
const out = at >= 0 ? argv.splice(at, 2)[1] : join(here, "..", "conforming");

const wanted = argv;
mkdirSync(out, { recursive: true });
let written = 0;
for (const [name, scenario] of Object.entries(SCENARIOS)) {
  if (wanted.length && !wanted.includes(name)) {
    continue;
  }
  const text = await scenario.run();
  writeFileSync(join(out, `${name}.jsonl`), text);
  written += 1;
  process.stderr.write(`${name}: ${text.split("\n").length - 1} lines\n`);
}
process.stderr.write(`${written} transcript(s) written to ${out}\n`);
