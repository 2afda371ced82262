"""Where a run opens in ``acp-lifecycle explore``: the command and the page's query.

The explorer names a run by its configuration, member, rule set or spec variant
(or seeded bug), the bounds changed from the member's (``--set``) and path, the
index of the action taken at each step among the enabled steps (docs/explore.md).
A run of rules the explorer cannot name (a seeded bug on a variant), or on
bounds changed other than by integer budgets, has no link: ``explore_link``
returns None.
"""

from __future__ import annotations

import shlex

from acp_lifecycle.model.config import RULE_SETS, Config, Rules
from acp_lifecycle.model.spec import Lifecycle

__all__ = ["explore_link", "path_of"]


def path_of(cfg: Config, rules: Rules, run) -> list[int]:
    """The action indices of a run (each step a real step of the model)."""
    model = Lifecycle(cfg, rules)
    path = []
    for pre, step in run:
        for i, cand in enumerate(model.next_steps(pre)):
            if cand.action == step.action and cand.state == step.state:
                path.append(i)
                break
        else:
            raise ValueError(f"step {step.action} is not a step of {rules.name} here")
    return path


def _explorer_names(rules: Rules) -> tuple[str, str] | None:
    """(rule set or variant, bug) the explorer offers for ``rules``, or None."""
    from acp_lifecycle.model.bugs import BUGS
    from acp_lifecycle.model.variants import VARIANTS

    if rules.name in RULE_SETS and RULE_SETS[rules.name] == rules:
        return rules.name, ""
    if rules.name in VARIANTS and VARIANTS[rules.name].rules == rules:
        return rules.name, ""
    for name, bug in BUGS.items():
        for base, r in RULE_SETS.items():
            if bug.on(r) == rules:
                return base, name
    return None


def _sets(member: Config | None, cfg: Config) -> dict | None:
    """The integer budgets ``cfg`` changes from the named ``member`` (None: it changes more, or no member)."""
    from dataclasses import fields

    from acp_lifecycle.model.config import LIMITS

    if member is None:
        return None
    changed = {f.name: getattr(cfg, f.name) for f in fields(cfg) if getattr(cfg, f.name) != getattr(member, f.name)}
    return changed if all(k in LIMITS for k in changed) else None


def explore_link(config: str, cfg: Config, rules: Rules, run) -> dict | None:
    """``{"command", "query", "path"}`` that open ``run`` in the explorer, or None when it cannot."""
    from acp_lifecycle.sims.configs import get_suite

    names = _explorer_names(rules)
    if names is None:
        return None
    try:
        members = {m.name: m for m in get_suite(config).members}
    except Exception:
        return None
    sets = _sets(members.get(cfg.name), cfg)
    if sets is None:
        return None
    rule_set, bug = names
    path = path_of(cfg, rules, run)
    text = ",".join(map(str, path))
    cmd = ["acp-lifecycle", "explore", "--config", config]
    query = {"config": config}
    if cfg.name != config:
        cmd += ["--member", cfg.name]
        query["member"] = cfg.name
    if rule_set != "rfd":
        cmd += ["--rules" if rule_set in RULE_SETS else "--variant", rule_set]
        query["rules"] = rule_set
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    if sets:
        query["set"] = ",".join(f"{k}={v}" for k, v in sets.items())
    if bug:
        cmd += ["--bug", bug]
        query["bug"] = bug
    cmd += ["--run", text]
    query["path"] = text
    from urllib.parse import urlencode

    return {"command": " ".join(shlex.quote(c) for c in cmd), "query": urlencode(query, safe=","), "path": path}
