"""The ``Property`` record, the registry it is added to (``PROPERTIES``, by ``prop``), when a
property applies (``APPLIES``) and the small readers of a step the rules share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Final

from ... import docstring
from ..clauses import CITATIONS, lookup
from ..judges import JUDGES, STATEFUL, restate
from ..system import IDLE, Step, System

# re-exported by the package; the helpers below without a leading underscore (prop, request_of,
# idle_updates, ...) are this package's own: rules.py and witnesses.py write the properties with them
__all__ = ["EXPECTATIONS", "KINDS", "PROPERTIES", "Property", "SPECS", "owed_at"]

KINDS = ("always", "step", "eventually", "sometimes")
EXPECTATIONS = ("must_hold", "known_limitation", "open_question", "reachable", "should")
SPECS = ("rfd", "2.4.0")


@dataclass(frozen=True, slots=True)
class Property:
    id: str
    kind: str
    expect: str
    summary: str
    check: Callable
    witnesses: tuple[str, ...] = ()
    level: str = "MUST"  # MUST or SHOULD: the strength of the rule
    #: whether a configuration can exhibit the situation at all (a sometimes
    #: about replay needs resumes); where it cannot, the verdict is "not
    #: applicable" instead of "not reached" or "not confirmed"
    applies: Callable = lambda cfg: True
    #: "rfd": a rule of every rule set; "2.4.0": a rule of rfd+2.4.0 only
    spec: str = "rfd"
    #: the expectation under rfd+2.4.0 where it differs ("" = the same)
    expect_240: str = ""
    #: sometimes only: the situation is a choice a SHOULD of the 2.4.0 text
    #: discourages, so only a lenient agent makes it under rfd+2.4.0
    lenient_240: bool = False
    #: the clauses, for a property built from a judge (``model/judges/``), which
    #: carries its own; the others' are ``clauses.CITATIONS``
    cites: tuple[str, ...] = ()
    #: the proposal that adds it (``model/proposals``): a rule only of rule sets that compose it; "" for the core's
    proposal: str = ""
    #: ``rules -> bool``: whether it is a rule under ``rules`` where a proposal's flag decides (None: always)
    when: Callable | None = None
    #: built from a proposal's judge (the core's judges are ``JUDGES``)
    from_judge: bool = False

    def expectation(self, rules) -> str:
        """What the property is expected to do under ``rules`` ("" when it is no rule of theirs)."""
        if self.proposal and (not rules.composes(self.proposal) or (self.when is not None and not self.when(rules))):
            return ""
        if self.spec == "2.4.0" and rules.spec != "rfd+2.4.0":
            return ""
        if self.lenient_240 and rules.spec == "rfd+2.4.0" and not rules.lenient:
            return ""
        exp = self.expect_240 if rules.spec == "rfd+2.4.0" and self.expect_240 else self.expect
        if rules.lenient and self.level == "SHOULD" and exp == "must_hold":
            return "should"
        return exp

    @property
    def clauses(self) -> tuple[str, ...]:
        return self.cites or CITATIONS.get(self.id, ())

    @property
    def judged(self) -> bool:
        """Whether the property is a judge of ``model/judges/``: one definition for check and trace."""
        return self.from_judge or self.id in JUDGES

    @property
    def quote(self) -> str:
        """The first cited clause's sentence, with its source."""
        return self.quote_for("")

    def clause_for(self, message) -> str:
        """The clause a violation quotes: its case's, when the judge named one (``model.judges.Cite``), else
        the first cited."""
        return getattr(message, "clause", "") or (self.clauses[0] if self.clauses else "")

    def quote_for(self, message) -> str:
        """The sentence of ``clause_for(message)``, with its source."""
        cid = self.clause_for(message)
        c = lookup(cid) if cid else None
        if c is None:
            return ""
        return f'{c.source}: "{c.text}"'


PROPERTIES: list[Property] = []


def prop(
    kind: str,
    expect: str = "must_hold",
    witnesses: tuple[str, ...] = (),
    level: str = "MUST",
    spec: str = "rfd",
    expect_240: str = "",
):
    """Register the decorated function as a property of this ``kind`` (its first doc line is its summary).

    As rules.py writes them: ``@prop("step", witnesses=(...))`` above ``def answered_before_its_work_ends(pre, step)``.
    Which steps a step property is run on is derived from its code (``dispatch.py``), not listed.
    """

    def register(fn: Callable) -> Callable:
        doc = docstring(fn).strip().splitlines()[0]
        PROPERTIES.append(
            Property(fn.__name__, kind, expect, doc, fn, witnesses, level,
                     applies=APPLIES.get(fn.__name__, always_applies), spec=spec, expect_240=expect_240)
        )
        return fn

    return register


def judged_property(judge_id: str) -> None:
    """Register the property of a judge (``model/judges/``): it judges what the agent sent and
    received in each step, with the judge's own definition, level, rule set and clauses."""
    j = JUDGES[judge_id]
    kind, check = ("step", _found_by(j.id)) if j.owes is None else ("eventually", _owed_by(j))
    level = "SHOULD" if j.level.startswith("SHOULD") else "MUST"
    spec = "2.4.0" if j.since == "2.4.0" else "rfd"
    PROPERTIES.append(Property(j.id, kind, "must_hold", j.summary[:1].upper() + j.summary[1:] + ".", check,
                               j.witnesses, level, applies=APPLIES.get(j.id, always_applies), spec=spec,
                               cites=j.clauses))


def _owed_by(j):
    """An ``eventually`` check: the first obligation the judge has open on some connection."""
    return owed_at(STATEFUL.index(j), j)


def owed_at(k: int, j):
    """The ``eventually`` check of judge ``j``, whose memory is the ``k``-th of ``System.seen``."""
    owes = j.owes

    def check(s: System):
        for c, state in enumerate(s.seen[k]):
            for _, why in owes(state):
                return restate(why, f"on client {c}'s connection: {why}")
        return None

    return check


def _found_by(jid: str):
    def check(pre: System, step: Step):
        # the judges ran as the step was made (``system.successors``): their findings travel with it
        for found, why in step.found:
            if found == jid:
                return why
        return None

    return check


def always_applies(cfg) -> bool:
    """Every configuration can exhibit the situation (the default of ``APPLIES``)."""
    return True


def _lost(c) -> bool:
    return c.losses > 0 or c.restarts > 0


def _resume(c) -> bool:
    return c.resumes > 0 and _lost(c)


def _resumes(c) -> bool:
    return c.resumes > 0


def _works(c) -> int:
    return c.agent_work + c.submissions + c.retries


#: Which configurations can exhibit each situation (see Property.applies).
APPLIES = {
    "sometimes_cancel_request_after_insertion": lambda c: c.cancels > 0,
    "cancelled_request_still_answered": lambda c: c.cancels > 0,
    "sometimes_reserved_id_rejected": lambda c: c.reserve,
    "sometimes_cancel_request_after_answer": lambda c: c.cancels > 0,
    "sometimes_failure_before_response": lambda c: c.failures > 0,
    "sometimes_identical_prompts_inserted": lambda c: c.submissions + c.retries >= 2,
    "sometimes_insert_after_restart": lambda c: c.restarts > 0 and c.resumes > 0 and (c.imports > 0 or c.prompts > 1),
    "sometimes_echo_to_two_clients": lambda c: c.clients > 1,
    "sometimes_failure_ends_work": lambda c: c.failures > 0,
    "sometimes_error_idle": lambda c: c.failures > 0,
    "sometimes_unfinished_tool_at_failure": lambda c: c.failures > 0 and c.tool_calls > 0,
    "sometimes_abort_raises": lambda c: c.failures > 0 and c.cancels > 0,
    "sometimes_cancel_ends_work": lambda c: c.cancels > 0,
    "sometimes_idle_ends_work_with_tools": lambda c: c.tool_calls > 0,
    "sometimes_repeated_idle": _resumes,
    "sometimes_identical_prompts_two_clients": lambda c: c.clients > 1,
    "sometimes_chunked_replay_over_held_copy": _resumes,
    "sometimes_replay": _resumes,
    "sometimes_chunked_replay": _resumes,
    "sometimes_resume_without_replay": _resumes,
    "sometimes_client_resumed": _resumes,
    "sometimes_command_replayed": lambda c: _resumes(c) and "/c" in c.alphabet,
    "sometimes_resume_while_connected": _resumes,
    "sometimes_replay_after_live": _resumes,
    "sometimes_acknowledged_live_only_not_replayed": lambda c: _resumes(c) and c.live_only,
    "sometimes_error_idle_without_details": lambda c: c.failures > 0,
    "sometimes_custom_stop_reason": lambda c: "_custom" in c.stop_reasons,
    "sometimes_idle_without_stop_reason": lambda c: "" in c.stop_reasons,
    "sometimes_start_blocked": lambda c: c.permissions > 0,
    "sometimes_update_after_cancel": lambda c: c.cancels > 0 and c.tool_calls > 0,
    "sometimes_queued_insert": lambda c: _works(c) >= 2 or c.hook,
    "sometimes_tool_starts_running": lambda c: c.tool_calls > 0,
    "sometimes_running_before_insertion": lambda c: c.hook,
    "sometimes_permission_cancelled": lambda c: c.permissions > 0 and c.cancels > 0,
    "sometimes_late_answer": lambda c: c.permissions > 0 and c.cancels > 0,
    "sometimes_permission_to_second_client": lambda c: c.permissions > 0 and c.clients > 1,
    "sometimes_two_commands": lambda c: "/c" in c.alphabet and c.submissions + c.retries >= 2,
    "sometimes_metadata_update": lambda c: c.meta,
    "sometimes_failure_work_continues": lambda c: c.failures > 0,
    "sometimes_cancel_finds_prompt_not_inserted": lambda c: c.cancels > 0,
    "sometimes_internal_cancellation": always_applies,
    "sometimes_response_lost": _lost,
    "sometimes_retry": lambda c: c.retries > 0 and _lost(c),
    "sometimes_cancel_reaches_running_work": lambda c: c.cancels > 0,
    "sometimes_stale_idle": lambda c: _works(c) >= 2 or c.hook,
    "lost_response_recoverable": _resume,
    "retry_does_not_duplicate": lambda c: c.retries > 0 and _lost(c),
    "session_cancel_stops_only_work_it_saw": lambda c: c.cancels > 0 and (_works(c) >= 2 or c.hook),
    "session_cancel_stops_inserted_waiting_prompt": lambda c: c.cancels > 0 and _works(c) >= 2,
    "resumed_client_sees_current_state": _resume,
    "resume_snapshot_before_response": _resumes,
}


def request_of(s: System, c: int, rid: int):
    """The agent's record of client c's request rid, unless a restart orphaned it."""
    for r in s.agent.reqs:
        if r.cid == c and r.rid == rid and not r.orphan:
            return r
    return None


def state_updates(step: Step) -> tuple:
    """The state_update messages a step sent, once each (broadcasts collapsed)."""
    return _updates(step.emitted)[0]


def idle_updates(step: Step) -> tuple:
    """The idle state_update messages a step sent, once each."""
    return _updates(step.emitted)[1]


#: the last ``emitted`` read and its (state updates, idle updates): the properties of one step
#: ask in turn, so it is worked out once a step (the tuple itself is kept: its id is not reused)
_LAST: Final[list] = [None, ((), ())]


def _updates(emitted: tuple) -> tuple:
    if emitted is _LAST[0]:
        return _LAST[1]
    seen = []
    for _, m in emitted:
        if m[0] == "state" and m not in seen:
            seen.append(m)
    got = (tuple(seen), tuple(m for m in seen if m[1] == IDLE)) if seen else ((), ())
    _LAST[0], _LAST[1] = emitted, got
    return got


def echoes(step: Step) -> list:
    """The user-message updates (whole or chunks) a step sent, with their clients."""
    return [(c, m) for c, m in step.emitted if m[0] in ("user_message", "chunk")]


def delivers(step: Step, *kinds: str) -> bool:
    """Whether a client takes a message in the step: its own receive, or the agent sending one of ``kinds``."""
    return step.action[0] == "ClientReceive" or any(m[0] in kinds for _, m in step.emitted)


def stops_work(step: Step) -> bool:
    """Whether the step is a failure that stops the foreground work."""
    return step.action[0] == "AgentFailWork" and step.action[1] == "stops-work"


def has_received(cl, mid: int) -> bool:
    """Has the client received a user message update for ``mid`` (not just its own optimistic copy)?"""
    return any(key == mid and not opt for key, _, opt in cl.view)


def was_processed(s: System, c: int, rid: int) -> bool:
    """Was client c's prompt rid inserted and taken by work that has ended?

    Derived, not recorded: an inserted message waits in ``pending`` until work
    takes it and stays in the work's inputs until that work ends. (A message
    whose work a restart dropped counts as processed: a blind spot, see
    docs/model.md.)
    """
    r = request_of_any(s, c, rid)
    if r is None or not r.ever_inserted:
        return False
    w = s.agent.work
    return r.mid not in s.agent.pending and (w is None or r.mid not in w.inputs)


def request_of_any(s: System, c: int, rid: int):
    """The agent's record of client c's request rid, orphaned or not."""
    for r in s.agent.reqs:
        if r.cid == c and r.rid == rid:
            return r
    return None
