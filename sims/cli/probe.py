"""`acp-lifecycle provider` (a scripted model provider) and `acp-lifecycle probe` (a published agent under test)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from rich.markup import escape

from .common import (Column, UsageError, add_force, add_json, console, input_file, output_dir, output_file,
                     path_argument, positive_int, print_table)


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
    from acp_lifecycle.sims.probe.profile import shipped

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
              "                           [--force] [--profile NAME|FILE] [--provider NAME]\n"
              "                           [--live] [--report FILE] [--timeout S] [--budget S]\n"
              "                           [--script FILE] -- AGENT [ARGS ...]",
        description="Start the scripted provider, point the agent at it (its profile: HOME, environment, settings, "
        "arguments, authentication), drive it as an ACP v1 client through each scenario, record each run as a "
        "transcript, bridge it to v2 and check it with trace's rules and trace --model; --live also drives it "
        "through `bridge serve --to v2` as a v2 client. Prints a conformance table; --json one record a line; "
        "--report a Markdown report. Exit status 0 when no run broke a MUST, none timed out and the model explains "
        f"every run, 1 otherwise. Shipped profiles: {', '.join(shipped())}. docs/probe.md.",
    )
    q.add_argument("stray", nargs="*", metavar="-- AGENT [ARGS ...]", help="the agent command line, after --")
    add_json(q, "one JSON record a line: a run record per scenario, a finding record per finding")
    q.add_argument("--scenario", nargs="+", choices=list(SCENARIOS), metavar="NAME",
                   help=f"the scenarios to run (default: all): {', '.join(SCENARIOS)}")
    path_argument(q, "--out", kind="out-dir", help="write transcripts here (default: a new temporary directory)")
    add_force(q, "files in a non-empty --out directory, an existing --report")
    q.add_argument("--profile", metavar="NAME|FILE",
                   help="the agent's profile: a shipped one's name or a TOML file (default: picked from the command)")
    q.add_argument("--provider", choices=PROVIDERS, metavar="NAME",
                   help=f"the API the agent calls, for an agent no profile matches: {', '.join(PROVIDERS)}")
    q.add_argument("--live", action="store_true", help="also run each scenario through `bridge serve --to v2` as a "
                   "v2 client and judge what it saw")
    path_argument(q, "--report", kind="out-file", suffixes=(".md",), help="write a Markdown conformance report here")
    q.add_argument("--timeout", type=_seconds, default=60.0, metavar="S",
                   help="seconds per scenario, handshake included (default 60; 2.5 times that for fail-500 and "
                        "overloaded, which agents retry)")
    q.add_argument("--budget", type=_seconds, default=600.0, metavar="S",
                   help="no scenario starts after this many seconds (default 600; doubled with --live)")
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


def _profile(args, command: list[str]):
    """The agent's profile: --profile, else the shipped one the command names, else --provider's."""
    from acp_lifecycle.sims.probe.profile import ProfileError, for_api, pick, resolve, shipped

    if args.profile is not None:
        if args.provider is not None:
            raise UsageError("choose one of --profile and --provider (a profile names its API)")
        try:
            return resolve(args.profile)
        except ProfileError as e:
            raise UsageError(str(e)) from None
    if args.provider is not None:
        return for_api(args.provider)
    found = pick(command)
    if found is None:
        raise UsageError(f"cannot tell which agent this is: pass --profile NAME|FILE (shipped: {', '.join(shipped())}) "
                         "or --provider anthropic|openai|openai-responses|gemini")
    return found


def _command(args) -> list[str]:
    if args.stray:
        raise UsageError(f"put the agent command after --: acp-lifecycle probe -- {' '.join(args.stray)}")
    command = args.program or []
    if not command:
        raise UsageError("give the agent command after --: acp-lifecycle probe -- AGENT [ARGS ...]")
    import shutil

    if shutil.which(command[0]) is None:
        raise UsageError(f"cannot start the agent {command[0]}: no such command (or not executable)")
    # The agent runs in a fresh working directory: paths given relative to ours are made absolute.
    return [str(Path(a).absolute()) if (i and not a.startswith("-") and Path(a).exists()) or (not i and "/" in a) else a
            for i, a in enumerate(command)]


def _probe(args) -> int:
    from acp_lifecycle.sims.probe import SCENARIOS, load_validators, probe

    out = output_dir(args.out, option="--out", force=args.force) if args.out is not None else None
    report_path = output_file(args.report, option="--report", force=args.force, suffixes=(".md",)) \
        if args.report is not None else None
    script = _script(args.script)
    if args.force and args.out is None and args.report is None:
        raise UsageError("--force applies only with --out or --report")
    given = list(args.program or [])
    command = _command(args)
    profile = _profile(args, command)
    if out is None:
        out = Path(tempfile.mkdtemp(prefix="acp-probe-"))
    validators = load_validators()
    if validators[1] is None:
        print("acp-lifecycle probe: schema validation skipped: no schema pulled (`acp-lifecycle schema pull` once)",
              file=sys.stderr)
    print(f"acp-lifecycle probe: {' '.join(command)} (profile {profile.name}, {profile.api} API); transcripts in {out}",
          file=sys.stderr, flush=True)

    def progress(r):
        if args.json:
            return
        live = f"; live: {r.live.status} ({r.live.seconds:.1f} s)" if r.live is not None else ""
        print(f"  {r.scenario}: {r.status} ({r.seconds:.1f} s){live}", file=sys.stderr, flush=True)

    results = probe(command, profile, args.scenario or list(SCENARIOS), out, timeout=args.timeout,
                    budget=args.budget, script=script, validators=validators, progress=progress, live=args.live)
    _report(results, args.json)
    if report_path is not None:
        from acp_lifecycle.sims.probe.report import report

        report_path.write_text(report(results, profile=profile, argv=_again(args, profile, given), live=args.live),
                               encoding="utf-8")
        print(f"acp-lifecycle probe: report written to {report_path}", file=sys.stderr)
    runs = [r for r in results] + [r.live for r in results if r.live is not None]
    bad = any(r.status in ("timeout", "error") or any(f.level == "violation" for f in r.findings)
              or (r.model or {}).get("verdict") == "unexplained" for r in runs)
    return 1 if bad else 0


def _again(args, profile, command: list[str]) -> list[str]:
    """The probe's arguments that reproduce this run (the report quotes them)."""
    argv = ["--profile", profile.name if not profile.source.endswith(".toml") or profile.source.startswith("profiles/")
            else profile.source]
    if args.scenario:
        argv += ["--scenario", *args.scenario]
    if args.live:
        argv.append("--live")
    if args.timeout != 60.0:
        argv += ["--timeout", f"{args.timeout:g}"]
    if args.script:
        argv += ["--script", args.script]
    return argv + ["--", *command]


def _report(results, as_json: bool) -> None:
    if as_json:
        for r in results:
            print(json.dumps(r.data()))
            for run, mode in ((r, None), (r.live, "live")):
                for f in run.findings if run is not None else []:
                    record = {"kind": "finding", "scenario": r.scenario, "transcript": run.transcript, **f.data()}
                    print(json.dumps(dict(record, mode=mode) if mode else record))
        return
    out = console()
    rows = []
    live = any(r.live is not None for r in results)
    for r in results:
        counts = [f"{sum(f.level == lvl for f in r.findings)} {lvl}s" for lvl in ("violation", "warning", "problem", "note")]
        status = r.status + (f"\n{escape(r.note)}" if r.note else "")
        row = [r.scenario, status, f"{r.seconds:.1f}", ", ".join(counts), _verdict(r)]
        if live:
            lv = r.live
            row.append("-" if lv is None else f"{lv.status}, {sum(f.level == 'violation' for f in lv.findings)} "
                       f"violations, model: {_verdict(lv)}")
        rows.append(row)
    columns = [Column("scenario", key=True), Column("outcome"), Column("s", "right"), Column("findings"), Column("model")]
    print_table(out, columns + ([Column("live (v2 via bridge serve)")] if live else []), rows)
    seen = set()  # a bridge problem (the handshake's, mostly) is shown once, where it first appears
    for r in results:
        for run, label in ((r, r.scenario), (r.live, f"{r.scenario}, live")):
            if run is None:
                continue
            shown = [f for f in run.findings if f.level != "problem" or (f.rule, f.message) not in seen]
            seen.update((f.rule, f.message) for f in run.findings if f.level == "problem")
            model = run.model if run.model and run.model["verdict"] != "explained" else None
            if not shown and not model:
                continue
            out.print(f"\n[bold]{escape(label)}[/] ({escape(run.transcript)})", highlight=False)
            for f in shown:
                where = f"line {f.line}" + (f" (v2 line {f.v2_line})" if f.v2_line and f.source != "live" else "")
                out.print(f"  {where}: {f.level} {escape(f.rule)} [{f.source}]: {escape(f.message)}", highlight=False)
                if f.quote:
                    out.print(f"      {f.clause}: {f.quote}", markup=False, highlight=False)
            if model:
                out.print(f"  model \\[trace --model]: {escape(model['text'])}", highlight=False)


def _verdict(r) -> str:
    """The model's verdict on a run, for the table: explained, unexplained (at a v1 line), inconclusive."""
    if r.model is None:
        return "-"
    line = r.model.get("v1_line") or r.model.get("line")
    return r.model["verdict"] + (f" (line {line})" if r.model["verdict"] == "unexplained" and line else "")
