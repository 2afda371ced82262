"""`acp-lifecycle schema`: pull the official v2 schema and validate the model's messages against it."""

from __future__ import annotations

import json

from acp_lifecycle.model.bugs import get_bug
from acp_lifecycle.model.config import RFD_RULES
from acp_lifecycle.sims.configs import get_suite

from .common import UsageError, action_help, add_json, path_argument, print_json, refuse_options


def register(sub) -> None:
    p = sub.add_parser("schema", help="the official v2 JSON schema (npm @agentclientprotocol/sdk@2.4.0)")
    p.add_argument("action", choices=["pull", "path", "validate"],
                    help="pull: fetch and verify it into the user cache (needs npm and the network); "
                         "path: print where it is; validate: check every message the model renders on a configuration")
    path_argument(p, "--schema", kind="in-json", help="path, validate: use this schema.json instead of the pulled copy")
    p.add_argument("--config", default="default", help="with validate: the configuration (default: default)")
    p.add_argument("--bug", help="with validate: a seeded bug's rules")
    add_json(p)
    p.action_helps = {"pull": _pull_help, "path": _path_help, "validate": _validate_help}  # `schema pull --help`
    p.set_defaults(run=_schema)


def _pull_help() -> str:
    return action_help("acp-lifecycle schema pull", "Fetch the official schema (v2, and v1 for the bridge) of "
                       "@agentclientprotocol/sdk@2.4.0 with npm, verify it against the pinned sha512 and keep it "
                       "in the user cache (~/.cache/acp-lifecycle). Needs npm and the network; prints where it is.",
                       lambda p: add_json(p))


def _path_help() -> str:
    def add(p):
        p.add_argument("--schema", metavar="PATH", help="this schema.json instead of the pulled copy")
        add_json(p)
    return action_help("acp-lifecycle schema path", "Print where the v2 schema is (the pulled copy; "
                       "$ACP_LIFECYCLE_SCHEMA or --schema when given).", add)


def _validate_help() -> str:
    def add(p):
        p.add_argument("--schema", metavar="PATH", help="this schema.json instead of the pulled copy")
        p.add_argument("--config", default="default", help="the configuration (default: default)")
        p.add_argument("--bug", help="a seeded bug's rules (default: the RFD's)")
        add_json(p)
    return action_help("acp-lifecycle schema validate", "Check every message the model renders on a configuration "
                       "against the v2 schema. Exit 0 when every one is valid, 1 otherwise.", add)


def _schema(args) -> int:
    from acp_lifecycle.sims.wire.schema import SchemaError, Validator, locate, pull, validate_model

    if args.action == "pull":
        refuse_options(args, "to pull (it fetches the pinned 2.4.0 schema; --schema names one you already have)",
                       "--schema", "--config", "--bug")
    elif args.action == "path":
        refuse_options(args, "to path", "--config", "--bug")
    else:  # everything checked before the work
        suite = get_suite(args.config)
        if not suite.exhaustive:
            raise UsageError(f"configuration {suite.name!r} is too large to validate exhaustively")
        rules = get_bug(args.bug).rules if args.bug is not None else RFD_RULES
    try:
        path = pull() if args.action == "pull" else locate(args.schema)
        validator = Validator(path) if args.action == "validate" else None
        if args.action == "pull":
            pull(version="v1")  # the v1 side of a bridge (`bridge serve`, the bridge tests)
    except SchemaError as e:
        raise UsageError(str(e)) from None
    if args.action != "validate":
        if args.json:
            print_json({"path": str(path)})
        else:
            print(path)
        return 0
    bad = 0
    members = []
    for cfg in suite.members:
        try:
            r = validate_model(validator, cfg, rules)
        except Exception as e:  # a schema that loads but that jsonschema cannot use (a bad keyword, a dangling $ref)
            if isinstance(e, (KeyboardInterrupt, MemoryError)):
                raise
            raise UsageError(f"schema {path}: cannot validate with it ({type(e).__name__}: {e})") from None
        bad += len(r.problems)
        members.append((cfg.name, r))
        if not args.json:
            print(f"{cfg.name}: {r.states:,} states, {r.messages:,} messages, {len(r.problems)} problem(s)")
            for problem, example in r.problems.items():
                print(f"  {problem}\n    e.g. {example[0]} {json.dumps(example[3], separators=(',', ':'))}")
    if args.json:
        print_json({
            "schema": str(path), "pinned": validator.pinned, "config": suite.name, "rules": rules.name, "ok": not bad,
            "members": [{"name": name, "states": r.states, "messages": r.messages,
                         "problems": [{"problem": problem, "direction": ex[0], "message": ex[3]}
                                      for problem, ex in r.problems.items()]} for name, r in members],
        })
    return 1 if bad else 0
