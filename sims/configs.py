"""Named configurations: what each exploration may do, and what its bounds exclude.

A named configuration is a *suite*: one or more ``Config`` members, each small
enough to explore exhaustively, each aimed at one part of the lifecycle. A suite
is checked member by member and the verdicts are combined (``sims.search.check``):

* a *must hold* property holds only if it holds in every member;
* a *known limitation* or *open question* is confirmed by the first member that
  shows a counterexample;
* a *sometimes* is reached if some member reaches it.

This is how the TLA+ Examples check one spec under several model files: the
interleavings of every feature with every other grow as a product, so one
member with every budget at 1 would take minutes; a suite covers each feature
with the others it interacts with, in seconds. ``wide`` widens every member.

Every member explores clients with their agent -> client channel delivered in
the step that sends it (``down_latency=False``) unless it says otherwise; the
``fifo`` members keep real FIFO channels both ways at a smaller size, and
docs/model.md explains why the verdicts agree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from acp_lifecycle.model import EXTRA_LIMITS, LIMITS, Config, ConfigError, Lifecycle
from acp_lifecycle.sims.errors import UsageError

__all__ = ["Suite", "SUITES", "get_suite", "ConfigError", "parse_bounds"]


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    summary: str
    members: tuple[Config, ...]
    #: False for suites too large to explore exhaustively (Hypothesis only)
    exhaustive: bool = True
    #: the states one member may reach before ``check`` stops with an error
    #: (``--max-states`` overrides it): a guard against a configuration that
    #: would fill the memory, about 150 bytes a state
    max_states: int = 3_000_000


def _c(name: str, **bounds) -> Config:
    bounds.setdefault("down_latency", False)
    bounds.setdefault("hook", False)
    return Config(name=name, **bounds).validate()


# Each member: a comment says what it is for and what its bounds exclude.
_DEFAULT = (
    # Two clients, one prompt each, identical content: IDs, echoes to every
    # client, response/echo order, association. Excludes faults.
    _c("multi-client", clients=2),
    # One client, one prompt, one failure, one cancel, one tool call: failure
    # before/after insertion and before the response, $/cancel_request racing
    # insertion, session/cancel, abort raising, unfinished tools; work ends
    # with end_turn, no stop reason or a custom one. Excludes a second client
    # and resume.
    _c("failures", failures=1, cancels=1, tool_calls=1, stop_reasons=("end_turn", "", "_custom")),
    # Foreground work before insertion (a hook) and agent-initiated work next
    # to a prompt, with one cancel: the session/cancel race between two pieces
    # of work. Excludes failures.
    _c("cancel-race", agent_work=1, cancels=1, hook=True),
    # A permission request and its answer, with a cancel and a tool call.
    _c("permission", permissions=1, tool_calls=1, cancels=1),
    # A permission request to either of two clients: requires_action reaches
    # both, the request one of them, and the other's prompt may be inserted
    # meanwhile. Excludes cancels (the permission member has them), tool
    # calls, early ID reservation, live-only prompts, chunked echoes.
    _c("permission-2-clients", clients=2, permissions=1, reserve=False, live_only=False, chunks=False),
    # Connection loss, resume with and without replay, retry: the lost
    # response and what a resumed client knows. Excludes restarts.
    _c("lost-response", losses=1, resumes=1, retries=1),
    # A locally handled command, an agent restart and a resume: live-only and
    # retained commands, replay after restart. Excludes ordinary prompts.
    _c("restart", alphabet=("/c",), restarts=1, resumes=1),
    # Two locally handled commands in one run, one work may take both.
    # Excludes faults, resume, early ID reservation, chunked echoes.
    _c("commands", alphabet=("/c",), prompts=2, reserve=False, chunks=False),
    # An imported message, a restart, a resume: IDs after restart, imported
    # messages in replay. One client, one ordinary prompt.
    _c("import", imports=1, restarts=1, resumes=1),
    # Real FIFO channels to the client as well (messages wait to be
    # delivered): one client, one prompt, one failure, one cancel, and a
    # metadata-only user_message after a chunked echo.
    _c("fifo", failures=1, cancels=1, down_latency=True, meta=True),
)

_TINY = (
    # One client, one prompt, no faults, FIFO channels both ways: small enough
    # to pin its counts in tests.
    Config(name="tiny", down_latency=True, hook=False).validate(),
)

_WIDE = (
    # Three clients, one prompt each.
    _c("wide-clients", clients=3, reserve=False, live_only=False),
    # Two clients with a failure and a cancel.
    _c("wide-failures", clients=2, failures=1, cancels=1, chunks=False),
    # Two clients, a connection loss, a resume, a retry.
    _c("wide-lost-response", clients=2, losses=1, resumes=1, retries=1, chunks=False, live_only=False),
    # Two prompts from one client with every stop reason.
    _c(
        "wide-stop-reasons",
        prompts=2,
        stop_reasons=("end_turn", "max_tokens", "max_turn_requests", "refusal"),
        failures=1,
        chunks=False,
    ),
) + _DEFAULT

# Three clients with the faults, each member exhaustive: bench/ and slow-marked
# tests run it (minutes on 2 cores), CI does not. Every member leaves
# out early ID reservation, live-only prompts and chunked echoes (the default
# members cover them) to keep three clients tractable.
_HUGE = (
    # Three clients, one prompt each, a failure and a cancel: a failure or a
    # cancel racing three prompts, echoes to three clients.
    _c("huge-failures", clients=3, failures=1, cancels=1, reserve=False, live_only=False, chunks=False),
    # Three clients, one prompt each, a lost connection and a resume: what a
    # resumed client sees while two others stay attached.
    _c("huge-lost-response", clients=3, losses=1, resumes=1, reserve=False, live_only=False, chunks=False),
    # Three clients with two prompts each, at most four in all: a client's
    # second prompt behind its first and behind the others' (two clients
    # with two each, or one with two beside two with one), four echoes to
    # three clients, two pieces of work or one taking several prompts.
    # Excludes faults, and a fifth and sixth prompt: all six without faults
    # grow about 2.6 times a level past 870,000 states at depth 15 of about
    # 40 (docs/performance.md, "`huge`, and why it is split").
    _c("huge-two-prompts", clients=3, prompts=2, total_prompts=4, reserve=False, live_only=False, chunks=False),
)

_HUGE_ALL = (
    # The combination issue 25 asked for in one member: three clients with two
    # prompts each (at most four in all), a failure, a cancel, a lost
    # connection and a resume. Beyond an exhaustive search on 2 cores: the
    # levels grow about threefold (docs/performance.md, "`huge`, and why it is
    # split"); its suite stops at 10,000,000 states.
    _c("huge-all", clients=3, prompts=2, total_prompts=4, failures=1, cancels=1, losses=1, resumes=1,
       reserve=False, live_only=False, chunks=False),
)

_FUZZ = (
    # Too big for exhaustive search: three clients with three prompts each,
    # every fault twice, FIFO channels both ways. For `acp-lifecycle fuzz`.
    Config(
        name="fuzz-3-clients",
        clients=3,
        prompts=3,
        alphabet=("a", "b", "/c"),
        tool_calls=2,
        permissions=1,
        failures=2,
        cancels=2,
        resumes=2,
        restarts=1,
        losses=2,
        imports=1,
        agent_work=1,
        retries=1,
        hold=True,
        hook=True,
        down_latency=True,
    ).validate(),
)

SUITES: dict[str, Suite] = {
    "tiny": Suite("tiny", "one client, one prompt, no faults (pinned in tests)", _TINY),
    "default": Suite("default", "every rule, one feature group per member (under 10 s)", _DEFAULT),
    "wide": Suite("wide", "three clients, two-client faults, every stop reason, plus default (docs/performance.md)", _WIDE),
    "huge": Suite("huge", "three clients with a failure, a cancel, a lost connection and a resume; "
                          "three clients with two prompts each, at most four in all (bench/, minutes)", _HUGE, max_states=10_000_000),
    "huge-all": Suite("huge-all", "three clients, two prompts each (four in all), a failure, a cancel, a lost "
                                  "connection and a resume in one member (beyond reach: docs/performance.md)",
                      _HUGE_ALL, max_states=10_000_000),
    "fuzz": Suite("fuzz", "three clients, three prompts each, every fault twice (Hypothesis only)", _FUZZ, False),
}


def get_suite(name: str, *rules) -> Suite:
    """The named suite, or a one-member suite for one member of any suite. With ``rules`` (a rule set or a
    variant's, one or more), a suite also has the members the proposals they compose add to it
    (``Lifecycle.members_for``), and a member may be one of those.

    >>> get_suite("default").members[0].name
    'multi-client'
    """
    added = _proposal_members(rules)
    if name in SUITES:
        suite = SUITES[name]
        extra = tuple(m for s, m in added if s == name)
        return replace(suite, members=suite.members + extra) if extra else suite
    for suite in SUITES.values():
        for m in suite.members + tuple(m for s, m in added if s == suite.name):
            if m.name == name:
                return replace(suite, name=m.name, summary=f"member {m.name} of {suite.name}", members=(m,))
    names = ", ".join(list(SUITES) + sorted({m.name for s in SUITES.values() for m in s.members} - set(SUITES)))
    raise ConfigError(f"unknown configuration {name!r}; choose one of: {names}")


def _proposal_members(rules) -> list[tuple[str, Config]]:
    """(suite name, member) for every member the proposals of ``rules`` add, each once (by name)."""
    out: list[tuple[str, Config]] = []
    for r in rules:
        for suite in SUITES:
            for m in Lifecycle.members_for(suite, r):
                if all(m.name != have.name for _, have in out):
                    out.append((suite, m))
    return out


def parse_bounds(texts: list[str], option: str = "--set ") -> dict[str, int]:
    """``["failures=2", ...]`` as ``{"failures": 2}``; ``UsageError`` (one line, each naming
    ``option`` and the text) for an unknown name, a missing value, a value that is not an integer,
    or one out of the bound's range."""
    sets: dict[str, int] = {}
    limits = {**LIMITS, **EXTRA_LIMITS}  # the core's bounds and the proposals'
    for text in texts:
        name, eq, value = text.partition("=")
        name = name.strip().replace("-", "_")
        if name not in limits:
            raise UsageError(f"{option}{text}: unknown bound {name!r} (give NAME=VALUE); bounds: {', '.join(limits)}")
        if not eq or not value.strip():
            lo, hi = limits[name]
            raise UsageError(f"{option}{text}: {name} needs a value (give {name}=VALUE, in {lo}..{hi})")
        try:
            number = int(value.strip())
        except ValueError:
            raise UsageError(f"{option}{text}: {value.strip()!r} is not an integer") from None
        lo, hi = limits[name]
        if not lo <= number <= hi:
            raise UsageError(f"{option}{text}: {name} must be in {lo}..{hi}")
        sets[name] = number
    return sets
