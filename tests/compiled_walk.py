"""Walk members breadth-first and print, per member, a digest of every state, step, message and finding.

Run by ``tests/test_compiled.py`` twice, once with the compiled model and once with
``ACP_LIFECYCLE_PURE=1`` (the interpreted one): the two must print the same lines.

    python tests/compiled_walk.py default bug:NAME ...   # a suite, a member, or a seeded bug's member
"""

from __future__ import annotations

import hashlib
import json
import sys


def walk(cfg, rules) -> dict:
    """Every state reachable under ``rules`` (one representative a class, as the search stores them),
    each with its steps: action, emitted messages, the judges' findings, the wire messages, the target,
    and what every property of the rule set says of the state and of the step (compiled too)."""
    from acp_lifecycle.model import Lifecycle

    model = Lifecycle(cfg, rules)
    props = [p for p in model.every_property() if model.expectation(p)]
    on_state = [p for p in props if p.kind in ("always", "eventually")]
    on_step = [p for p in props if p.kind in ("step", "sometimes")]
    canon = model.canonicalizer() or (lambda s: s)
    (s0,) = model.init_states()
    seen, queue, h, steps = {canon(s0)}, [s0], hashlib.sha256(), 0
    while queue:
        nxt = []
        for s in queue:
            for step in model.next_steps(s):
                steps += 1
                rep = canon(step.state)
                said = ([str(p.check(s)) for p in on_state], [str(p.check(s, step)) for p in on_step])
                line = (step.action, step.emitted, step.found, model.step_messages(s, step), step.state, rep, said)
                h.update(repr(line).encode())
                if rep not in seen:
                    seen.add(rep)
                    nxt.append(rep)
        queue = nxt
    return {"states": len(seen), "steps": steps, "digest": h.hexdigest()}


def main(argv: list[str]) -> int:
    import acp_lifecycle
    from acp_lifecycle.model import BUGS, RFD_RULES
    from acp_lifecycle.sims.configs import get_suite

    print(json.dumps({"model_path": acp_lifecycle.model_path}), flush=True)
    from acp_lifecycle.model import PROPERTIES

    # the properties' table: a compiled property's summary comes from the build (``acp_lifecycle.docstring``)
    print(json.dumps({"properties": [[p.id, p.kind, p.summary] for p in PROPERTIES]}), flush=True)
    for arg in argv:
        if arg.startswith("bug:"):
            bug = BUGS[arg[4:]]
            runs = [(arg, get_suite(bug.member).members[0], bug.rules)]
        else:
            runs = [(m.name, m, RFD_RULES) for m in get_suite(arg).members]
        for name, cfg, rules in runs:
            print(json.dumps({"member": name, **walk(cfg, rules)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
