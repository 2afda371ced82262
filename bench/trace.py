"""Benchmark: the transcript monitor on the conformance corpus.

Prints transcripts, messages, and messages per second of `check_transcript`
over tests/corpus/conforming, rules only and with the pinned schema (when it
has been pulled), plus parse speed.

    python bench/trace.py [ROUNDS]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from acp_lifecycle.sims.wire.schema import SchemaError, Validator, locate
from acp_lifecycle.sims.wire.transcript import check_transcript, parse

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "conforming"


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    files = sorted(CORPUS.glob("*.jsonl"))
    t0 = time.perf_counter()
    parsed = [parse(f) for f in files]
    parse_s = time.perf_counter() - t0
    messages = sum(1 for entries in parsed for _, e in entries if "msg" in e)
    print(f"{len(files)} transcripts, {messages:,} messages; parse {messages / parse_s:,.0f} messages/s")
    try:
        validator = Validator(locate())
    except SchemaError:
        validator = None
    for label, v in (("rules only", None), ("with the schema", validator)):
        if label != "rules only" and v is None:
            print("with the schema: skipped (run `acp-lifecycle schema pull`)")
            continue
        t0 = time.perf_counter()
        for _ in range(rounds):
            for entries in parsed:
                check_transcript(entries, validator=v)
        s = time.perf_counter() - t0
        print(f"{label}: {rounds * messages / s:,.0f} messages/s ({s / rounds * 1000:.1f} ms per pass over the corpus)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
