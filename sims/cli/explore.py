"""`acp-lifecycle explore`: the model in the browser, one step at a time (docs/explore.md)."""

from __future__ import annotations

import json
import sys

from .common import UsageError, add_force, add_json, output_dir, path_argument, port_number
from .options import add_model_options, model_rules, parse_sets


def register(sub) -> None:
    p = sub.add_parser("explore", help="serve a page on 127.0.0.1 to step through the model in a browser")
    p.add_argument("--config", default="tiny", help="named configuration or member (default: tiny)")
    p.add_argument("--member", help="a member of --config (default: its first)")
    add_model_options(p)
    p.add_argument("--bug", help="a seeded bug (see `bugs --list`); prints the link to its counterexample")
    p.add_argument("--run", dest="indices", metavar="INDICES", help="open this run: the action taken at each step, as 0,3,1 "
                   "(the page's path)")
    p.add_argument("--port", type=port_number(0), default=0, help="the port on 127.0.0.1 (default 0: a free one)")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    path_argument(p, "--screenshots", kind="out-dir",
                  help="write the screenshots of docs/explore.md into DIR with headless Chromium, then exit")
    add_force(p, "files in a non-empty --screenshots DIR")
    add_json(p, "print where the page is as one JSON line ({url, counterexample}), then serve")
    p.set_defaults(run=_explore)


def _explore(args) -> int:
    from acp_lifecycle.sims.explore.model_access import BadRequest, model_for, parse_path
    from acp_lifecycle.sims.explore.server import Explorer

    for option, dest in (("member", "member"), ("bug", "bug"), ("run", "indices")):
        if getattr(args, dest) is not None and not getattr(args, dest).strip():
            raise UsageError(f"--{option}: give a value (leave the option out for the default)")
    args.member, args.bug, args.indices = args.member or "", args.bug or "", args.indices or ""
    model_rules(args)  # one line for an unknown variant, or both options given
    args.rules = args.variant or args.rules or "rfd"  # the page's query names a variant as its rules
    sets = ",".join(f"{k}={v}" for k, v in parse_sets(args.sets).items())
    try:
        model = model_for(args.config, args.member, args.rules, args.bug, sets)
        path = parse_path(args.indices)
        model.walk(path)
    except BadRequest as e:
        raise UsageError(str(e)) from None
    if args.screenshots is not None:
        return _screenshots(args)
    try:
        server = Explorer(args.port)
    except OSError as e:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}") from None
    url = server.url + "?" + model.query(path)
    link = _counterexample(server, args) if args.bug and not path else None
    if args.json:
        print(json.dumps({"url": url, "counterexample": link}), flush=True)
    else:
        print(f"acp-lifecycle explore: {url}", flush=True)
        if link:
            print(f"  counterexample of {link['property']} ({link['steps']} steps): {link['url']}", flush=True)
    print("  (Ctrl-C stops it; it binds 127.0.0.1 only and writes nothing)", file=sys.stderr, flush=True)
    if args.open:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _counterexample(server, args) -> dict | None:
    """The link to the counterexample ``check`` finds for ``--bug`` on the bug's member."""
    from acp_lifecycle.model.bugs import BUGS
    from acp_lifecycle.sims.explore.model_access import BadRequest, model_for

    bug = BUGS[args.bug]
    try:
        shown = model_for(bug.member, "", args.rules, args.bug)
        found = [t for t in shown.check_traces() if t["property"] == bug.breaks and not t["ok"]]
    except BadRequest:
        return None
    if not found:
        return None
    return {"property": bug.breaks, "steps": len(found[0]["path"]), "url": f"{server.url}?{shown.query(found[0]['path'])}"}


def _screenshots(args) -> int:
    from acp_lifecycle.sims.explore.shots import chromium, screenshots

    out = output_dir(args.screenshots, option="--screenshots", force=args.force)
    if chromium() is None:
        raise UsageError("--screenshots needs chromium on PATH (Debian: apt-get install chromium)")
    for line in screenshots(out):
        print(line)
    return 0
