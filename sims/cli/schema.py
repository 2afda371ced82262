"""`acp-lifecycle schema`: pull the official v2 schema and validate the model's messages against it."""

from __future__ import annotations

import json

from acp_lifecycle.model.bugs import get_bug
from acp_lifecycle.model.config import RFD_RULES
from acp_lifecycle.sims.configs import get_suite

from .common import UsageError


def register(sub) -> None:
    p = sub.add_parser("schema", help="the official v2 JSON schema (npm @agentclientprotocol/sdk@2.4.0)")
    p.add_argument("action", choices=["pull", "path", "validate"],
                    help="pull: fetch and verify it into the user cache; path: print where it is; "
                         "validate: check every message the model renders on a configuration")
    p.add_argument("--schema", metavar="PATH", help="use this schema.json instead of the pulled copy")
    p.add_argument("--config", default="default", help="with validate: the configuration (default: default)")
    p.add_argument("--bug", help="with validate: a seeded bug's rules")

    p.set_defaults(run=_schema)


def _schema(args) -> int:
    from acp_lifecycle.sims.wire.schema import SchemaError, locate, pull

    try:
        path = pull() if args.action == "pull" else locate(args.schema)
    except SchemaError as e:
        raise UsageError(str(e)) from None
    if args.action != "validate":
        print(path)
        return 0
    from acp_lifecycle.sims.wire.schema import Validator, validate_model

    suite = get_suite(args.config)
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large to validate exhaustively")
    rules = get_bug(args.bug).rules if args.bug else RFD_RULES
    validator = Validator(path)
    bad = 0
    for cfg in suite.members:
        r = validate_model(validator, cfg, rules)
        print(f"{cfg.name}: {r.states:,} states, {r.messages:,} messages, {len(r.problems)} problem(s)")
        for problem, example in r.problems.items():
            bad += 1
            print(f"  {problem}\n    e.g. {example[0]} {json.dumps(example[3], separators=(',', ':'))}")
    return 1 if bad else 0
