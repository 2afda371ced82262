"""`acp-lifecycle find "PATTERN"`: the shortest run matching a sequence of events (sims/find).

Exit status: 0 when a run matches, 1 when none does within the bounds, 2 for bad usage.
"""

from __future__ import annotations

from .common import UsageError, add_json, command_lines, print_json, print_lines, screen
from .options import add_model_options

EXAMPLE = "AgentInsert(_, _, queued) then ClientCancelSession then AgentBeginWork(input) and never AgentEndWork(end_turn)"


def register(sub) -> None:
    p = sub.add_parser(
        "find",
        help="the shortest run matching a sequence of events (in the labels scenario and diff print)",
        description="Find the shortest run of the model matching PATTERN: events joined by 'then', each an "
        "action label as `scenario` prints it (AgentInsert(_, _, queued), ClientCancelSession) or a message "
        "label as `diff` prints it (session/cancel, state_update running, c0 <- error -32800), optionally "
        "followed by 'and never X [or Y]'. Example: \"" + EXAMPLE + "\". Exit 0: found; 1: no run matches "
        "within the bounds; 2: bad usage.",
    )
    p.add_argument("pattern", metavar="PATTERN", help="the events to find (sims/find/pattern.py has the grammar)")
    p.add_argument("--config", default="default", help="named configuration or member (default: default)")
    add_json(p, "print the result as one JSON line (the run, the steps that matched, the explore link)")
    add_model_options(p)  # --rules or --variant, --set
    p.set_defaults(run=_find)


def _find(args) -> int:
    from acp_lifecycle.sims.find import PatternError, find, parse

    from .diff import exhaustive
    from .options import model_rules

    try:
        pattern = parse(args.pattern)
    except PatternError as e:
        raise UsageError(f"PATTERN: {e}") from None
    rules = model_rules(args)
    (suite,) = exhaustive(args.config, args.sets)
    r = find(suite.members, rules, pattern)
    if args.json:
        print_json(find_data(r, suite.name))
    else:
        out = screen()
        print_lines(out, find_lines(r, suite.name, out.width))
    return 0 if r.found else 1


def find_data(r, config: str) -> dict:
    from acp_lifecycle.sims.diff.links import explore_link
    from acp_lifecycle.sims.render import trace_data

    data = {"pattern": r.pattern.text, "rules": r.rules.name, "config": config, "found": r.found is not None,
            "members": r.members, "states": r.nodes, "seconds": round(r.seconds, 3)}
    if r.found:
        f = r.found
        data.update({
            "member": f.member.name,
            "steps": len(f.run),
            "matched": [{"event": e.text, "step": n} for e, n in zip(r.pattern.events, f.at)],
            "never": [e.text for e in r.pattern.never],
            "explore": explore_link(config, f.member, r.rules, f.run),
            "run": trace_data(f.run),
        })
    return data


def find_lines(r, config: str, width: int = 80) -> list[str]:
    from acp_lifecycle.sims.diff.links import explore_link
    from acp_lifecycle.sims.render import trace_lines

    head = f"acp-lifecycle find under {r.rules.name} on {config}: {r.pattern.text}"
    if not r.found:
        return [head, "", f"No run matches within the bounds ({r.nodes:,} states of {len(r.members)} "
                          f"member{'s' * (len(r.members) != 1)} searched)."]
    f = r.found
    lines = [head, "", f"The shortest run: member {f.member.name}, {len(f.run)} steps."]
    for e, n in zip(r.pattern.events, f.at):
        lines.append(f"  step {n:>2} matches  {e.text}")
    for e in r.pattern.never:
        lines.append(f"  no step matches  {e.text}")
    lines += [""] + trace_lines(f.run, compact=True)
    link = explore_link(config, f.member, r.rules, f.run)
    if link:
        lines += ["", "Open it:", *command_lines(link["command"], width)]  # broken between arguments only
    return lines
