"""`acp-lifecycle provider` (a scripted model provider) and `acp-lifecycle probe` (a published agent under test)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from rich.markup import escape

from .common import (Column, UsageError, add_force, add_json, console, input_file, output_dir, path_argument,
                     positive_int, print_table)


def _port(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"a port is between 1 and 65535, not {n}")
    return n


def _seconds(text: str) -> float:
    try:
        n = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < n <= 3600:
        raise argparse.ArgumentTypeError(f"give between 0 and 3600 seconds, not {text}")
    return n


def register(sub) -> None:
    from acp_lifecycle.sims.probe import PROVIDERS, SCENARIOS

    p = sub.add_parser(
        "provider",
        help="a scripted model provider on 127.0.0.1 (Anthropic, OpenAI, Gemini APIs) for agents under test",
        description="Serve the model APIs published agents call (Anthropic Messages, OpenAI Chat Completions and "
        "Responses, Gemini generateContent), answering by script: keywords in the prompt ([tool], [slow], "
        "[fail-401], [fail-500], [overloaded], [fail-midstream]) or a script file. It stops by itself after "
        "--max-requests requests or --idle-timeout seconds without one. docs/probe.md.",
    )
    p.add_argument("--port", type=_port, default=8765, help="the port on 127.0.0.1 (default 8765)")
    path_argument(p, "--script", kind="in-json", help='turns to add: {"turns": [{"name", "match", "chunks", ...}]}')
    p.add_argument("--max-requests", type=positive_int, default=1000, help="stop after this many requests (default 1000)")
    p.add_argument("--idle-timeout", type=_seconds, default=600.0, help="stop after this long without a request (default 600 s)")
    add_json(p, "print each request as a JSON line on stdout (default: one short line per request)")
    p.set_defaults(run=_provider)

    q = sub.add_parser(
        "probe",
        help="run a published ACP v1 agent against the scripted provider through scenarios and judge each run",
        # every option, as its own help names it, in lines of at most 80 columns
        usage="acp-lifecycle probe [-h] [--json] [--scenario NAME ...] [--out DIR]\n"
              "                           [--force] [--provider NAME] [--timeout S]\n"
              "                           [--budget S] [--script FILE] -- AGENT [ARGS ...]",
        description="Start the scripted provider, point the agent at it (its own HOME and settings), drive it as "
        "an ACP v1 client through each scenario, record each run as a transcript, bridge it to v2 and check it "
        "with trace's rules. Prints a conformance table; --json one record a line. Exit status 0 when no run "
        "broke a MUST and none timed out, 1 otherwise. docs/probe.md.",
    )
    q.add_argument("stray", nargs="*", metavar="-- AGENT [ARGS ...]", help="the agent command line, after --")
    add_json(q, "one JSON record a line: a run record per scenario, a finding record per finding")
    q.add_argument("--scenario", nargs="+", choices=list(SCENARIOS), metavar="NAME",
                   help=f"the scenarios to run (default: all): {', '.join(SCENARIOS)}")
    path_argument(q, "--out", kind="out-dir", help="write transcripts here (default: a new temporary directory)")
    add_force(q, "files in a non-empty --out directory")
    q.add_argument("--provider", choices=PROVIDERS, metavar="NAME",
                   help=f"the API the agent calls: {', '.join(PROVIDERS)} (default: guessed from the command)")
    q.add_argument("--timeout", type=_seconds, default=60.0, metavar="S", help="seconds per scenario, handshake included (default 60; 2.5 times that for fail-500 and "
                        "overloaded, which agents retry)")
    q.add_argument("--budget", type=_seconds, default=600.0, metavar="S", help="no scenario starts after this many seconds (default 600)")
    path_argument(q, "--script", kind="in-json", help="the provider's script file (see `provider --help`)")
    q.set_defaults(run=_probe, takes_program=True, program=None)


def _script(path):
    from acp_lifecycle.sims.provider import Script, ScriptError

    if path is None:
        return None
    input_file(path, option="--script")
    try:
        return Script.load(path)
    except ScriptError as e:
        raise UsageError(str(e)) from None


def _provider(args) -> int:
    from acp_lifecycle.sims.provider import Provider

    script = _script(args.script)

    class _Log:
        def write(self, line: str) -> None:
            if args.json:
                sys.stdout.write(line)
                return
            r = json.loads(line)
            print(f"{r['n']:>4} {r.get('method', '')} {r.get('path', '')} {r.get('model', '')} "
                  f"turn={r.get('turn', '-')} status={r.get('status')}", flush=True)

        def flush(self) -> None:
            sys.stdout.flush()

    try:
        server = Provider(script, port=args.port, log=_Log(), max_requests=args.max_requests,
                          idle_timeout=args.idle_timeout)
    except OSError as e:
        raise UsageError(f"--port {args.port}: cannot listen on 127.0.0.1 ({e.strerror or e})") from None
    print(f"acp-lifecycle provider: listening on {server.url} (stops after {args.idle_timeout:g} s idle "
          f"or {args.max_requests} requests)", file=sys.stderr, flush=True)
    server.start()
    try:
        server.wait()
    finally:
        server.stop()
    return 0


def _probe(args) -> int:
    from acp_lifecycle.sims.probe import SCENARIOS, guess_provider, load_validators, probe

    out = output_dir(args.out, option="--out", force=args.force) if args.out is not None else None
    script = _script(args.script)
    if args.force and args.out is None:
        raise UsageError("--force applies only with --out")
    if args.stray:
        raise UsageError(f"put the agent command after --: acp-lifecycle probe -- {' '.join(args.stray)}")
    command = args.program or []
    if not command:
        raise UsageError("give the agent command after --: acp-lifecycle probe -- AGENT [ARGS ...]")
    import shutil

    if shutil.which(command[0]) is None:
        raise UsageError(f"cannot start the agent {command[0]}: no such command (or not executable)")
    # The agent runs in a fresh working directory: paths given relative to ours are made absolute.
    command = [str(Path(a).resolve()) if i and not a.startswith("-") and Path(a).exists() else a
               for i, a in enumerate(command)]
    provider = args.provider or guess_provider(command)
    if provider is None:
        raise UsageError("cannot tell which API the agent calls: pass --provider anthropic|openai|gemini")
    if out is None:
        out = Path(tempfile.mkdtemp(prefix="acp-probe-"))
    validators = load_validators()
    if validators[1] is None:
        print("acp-lifecycle probe: schema validation skipped: no schema pulled (`acp-lifecycle schema pull` once)",
              file=sys.stderr)
    print(f"acp-lifecycle probe: {' '.join(command)} via {provider}; transcripts in {out}", file=sys.stderr, flush=True)

    def progress(r):
        if args.json:
            return
        print(f"  {r.scenario}: {r.status} ({r.seconds:.1f} s)", file=sys.stderr, flush=True)

    results = probe(command, provider, args.scenario or list(SCENARIOS), out, timeout=args.timeout,
                    budget=args.budget, script=script, validators=validators, progress=progress)
    _report(results, args.json)
    bad = any(r.status in ("timeout", "error") or any(f.level == "violation" for f in r.findings) for r in results)
    return 1 if bad else 0


def _report(results, as_json: bool) -> None:
    if as_json:
        for r in results:
            print(json.dumps(r.data()))
            for f in r.findings:
                print(json.dumps({"kind": "finding", "scenario": r.scenario, "transcript": r.transcript, **f.data()}))
        return
    out = console()
    rows = []
    for r in results:
        counts = [f"{sum(f.level == lvl for f in r.findings)} {lvl}s" for lvl in ("violation", "warning", "problem", "note")]
        status = r.status + (f"\n{escape(r.note)}" if r.note else "")
        rows.append([r.scenario, status, f"{r.seconds:.1f}", ", ".join(counts)])
    print_table(out, [Column("scenario", key=True), Column("outcome"), Column("s", "right"), Column("findings")], rows)
    seen = set()  # a bridge problem (the handshake's, mostly) is shown once, where it first appears
    for r in results:
        shown = [f for f in r.findings if f.level != "problem" or (f.rule, f.message) not in seen]
        seen.update((f.rule, f.message) for f in r.findings if f.level == "problem")
        if not shown:
            continue
        out.print(f"\n[bold]{r.scenario}[/] ({escape(r.transcript)})", highlight=False)
        for f in shown:
            where = f"line {f.line}" + (f" (v2 line {f.v2_line})" if f.v2_line else "")
            out.print(f"  {where}: {f.level} {escape(f.rule)} [{f.source}]: {escape(f.message)}", highlight=False)
            if f.quote:
                out.print(f"      {f.clause}: {f.quote}", markup=False, highlight=False)
