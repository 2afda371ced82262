"""The options every command that explores shares: which rules (``--rules``, ``--variant``) and
which bounds (``--set NAME=VALUE``), parsed in one place.

``--rules`` names a rule set (rfd, rfd+2.4.0); ``--variant`` a spec variant (a file of
``model/variants/``: its base, a rule set or another variant, with its changes; one whose rules
equal its base's is said so on stderr at once). ``--set`` raises or lowers one integer
budget of ``Config`` (``model/config.py``, ``LIMITS``) on every member the command explores.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from acp_lifecycle.model.config import LIMITS, RULE_SETS, Config, ConfigError, Rules, rule_set

from .common import UsageError

__all__ = ["add_model_options", "model_rules", "parse_sets", "suite_with_sets", "variant_expectation",
           "variant_expectations", "with_sets"]


def add_model_options(p: argparse.ArgumentParser, *, rules: bool = True, sets: bool = True,
                      rules_default: str = "rfd") -> None:
    """Add ``--rules`` and ``--variant`` (with ``rules``) and ``--set`` (with ``sets``) to ``p``;
    ``rules_default`` is what the help says the command does without either."""
    if rules:
        p.add_argument("--rules", choices=tuple(RULE_SETS), default=None,
                       help=f"the rule set: the RFD as written (rfd) or refined by the 2.4.0 schema text "
                            f"(rfd+2.4.0); default: {rules_default}")
        p.add_argument("--variant", metavar="NAME",
                       help="a spec variant instead (`acp-lifecycle variants --list`): its base's rules, changed")
    if sets:
        p.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE",
                       help=f"raise or lower a bound on every member explored (repeatable): {', '.join(LIMITS)}")


def model_rules(args, default: str = "rfd") -> Rules:
    """The rules ``--rules`` or ``--variant`` names (``default``'s rule set when neither is given).
    A variant whose rules equal its base's is said so at once, one line on stderr."""
    name = getattr(args, "variant", None)
    if name is not None:
        if getattr(args, "rules", None) is not None:
            raise UsageError("choose one of --rules and --variant (a variant names its base rule set)")
        from acp_lifecycle.model.variants import VARIANTS

        if name not in VARIANTS:
            raise UsageError(f"--variant: unknown variant {name!r}; choose one of: {', '.join(VARIANTS)}")
        v = VARIANTS[name]
        if v.unchanged:
            print(f"acp-lifecycle: {v.unchanged_line()}", file=sys.stderr, flush=True)
        return v.rules
    return rule_set(getattr(args, "rules", None) or default)


def variant_expectation(args):
    """Under ``--variant``, each property's expectation as the variant's file gives it ("" for one it
    cannot state; a limitation it fixes expected to hold); None without ``--variant``."""
    name = getattr(args, "variant", None)
    if name is None:
        return None
    from acp_lifecycle.model.variants import get_variant

    v = get_variant(name)
    return lambda prop: "" if prop.id in v.not_applicable else v.expectation(prop)


def variant_expectations(result, args) -> None:
    """Under ``--variant``, judge ``result``'s verdicts (a ``SuiteResult``) by the variant's own
    expectations (``variant_expectation``)."""
    expectation = variant_expectation(args)
    if expectation is None:
        return
    for verdict in result.verdicts.values():
        verdict.expect = expectation(verdict.prop)


def parse_sets(texts: list[str], option: str = "--set ") -> dict[str, int]:
    """``["failures=2", ...]`` as ``{"failures": 2}``; ``UsageError`` (one line) for a bad one
    (``sims.configs.parse_bounds``, which the explorer's ``set=`` shares)."""
    from acp_lifecycle.sims.configs import parse_bounds

    return parse_bounds(texts, option)


def with_sets(cfg: Config, sets: dict[str, int]) -> Config:
    """``cfg`` with the bounds of ``sets`` (unchanged without any); a member keeps its name."""
    if not sets:
        return cfg
    try:
        return cfg.with_(**sets)
    except ConfigError as e:  # pragma: no cover - parse_sets checked each range
        raise UsageError(f"--set: {e}") from None


def suite_with_sets(suite, sets: dict[str, int]):
    """A suite whose every member has the bounds of ``sets``."""
    if not sets:
        return suite
    changed = ", ".join(f"{k}={v}" for k, v in sets.items())
    return replace(suite, members=tuple(with_sets(m, sets) for m in suite.members),
                   summary=f"{suite.summary}; {changed}")
