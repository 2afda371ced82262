"""Mutant families written from the clause texts: where a clause names a value, send another one.

Issue 34 found rules that accepted any value where their clause names one (an idle ending cancelled
work with no stop reason passed a rule whose clause says ``stopReason: "cancelled"``). A value
family closes that class by construction: for each clause naming a value a participant sends
(``NAMED``, read from the clause texts), one mutant per other value of that field sends the other
value in its place, and ``tests/test_values.py`` requires a rule citing the clause to catch each, on
the member where the value is sent. ``tests/test_values.py`` also walks every in-scope clause whose
text names a value of a known field and requires it here (or among ``NOT_SENT``, with the reason).

The mutants change only what is sent (the agent's and clients' own records keep the value they
meant): a rule that read the model's bookkeeping instead of the messages would not see them.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp_lifecycle.sims.mutate.core import Mutant, post, with_sent

__all__ = ["FIELDS", "MUTANTS", "NAMED", "NOT_SENT", "Named", "value_mutants"]


@dataclass(frozen=True)
class Field:
    """A value in a message of the model: message kind, sender, index in the tuple, its other values."""

    kind: str
    sender: str  # "agent" or "client"
    index: int
    #: the values a mutant sends in place of the named one ("" for a field the wire may omit)
    values: tuple


FIELDS = {
    "stopReason": Field("state", "agent", 2, ("end_turn", "cancelled", "error", "max_tokens", "")),
    "state": Field("state", "agent", 1, ("idle", "running", "requires_action")),
    "status": Field("tool", "agent", 2, ("failed", "completed")),
    "outcome": Field("perm_ans", "client", 2, ("cancelled", "selected")),
}


@dataclass(frozen=True)
class Named:
    """A clause naming a value of a field: where the model sends it, the rule set and member that show it."""

    clauses: tuple[str, ...]
    field: str
    value: object
    member: str
    rules: str = "rfd+2.4.0"
    #: "any" step that sends the value, or "failure": only a step that also sends an error idle (the value
    #: is named for what a failure sends: "using failed for calls that did not complete")
    where: str = "any"
    #: the rule expected to catch the other values
    kills: str = ""

    def others(self) -> tuple:
        return tuple(v for v in FIELDS[self.field].values if v != self.value)


NAMED: tuple[Named, ...] = (
    Named(("RFD-CANCEL-EVEN-IF-ABORT-FAILS", "S240-CANCEL-IDLE-CANCELLED", "S240-STOP-CANCELLED-REPORT",
           "S240-STOP-CANCELLED-CATCH", "S240-CANCEL-ABORT-ERRORS"), "stopReason", "cancelled", "cancel-race",
          kills="cancelled_work_ends_cancelled"),
    Named(("RFD-ERROR-MEANING", "S240-PROMPT-FAILURE-ERROR-STOP"), "stopReason", "error", "failures",
          kills="failed_work_ends_with_error_idle"),
    Named(("RFD-FAIL-TOOLS-TERMINAL",), "status", "failed", "failures", where="failure",
          kills="failure_marks_unfinished_tools_failed"),
    Named(("S240-PERM-CLIENT-ANSWERS-CANCELLED", "S240-CANCELREQ-RESULT"), "outcome", "cancelled", "permission",
          kills="cancelled_permission_answered_cancelled"),
    Named(("S240-STATE-SHOULD-REQUIRES-ACTION",), "state", "requires_action", "permission",
          kills="blocked_work_reported_requires_action"),
    Named(("S240-STATE-REPORT-RUNNING",), "state", "running", "multi-client", kills="client_sees_current_state"),
    Named(("S240-STATE-REPORT-IDLE", "S240-STATE-IDLE-WHEN-NONE"), "state", "idle", "multi-client",
          kills="ended_work_reported_idle"),
)

#: in-scope clauses whose text names a value of a field above that no participant sends as that value
#: (a condition, a value read, not sent): why each has no family
NOT_SENT = {
    "RFD-BACKGROUND-FAILURE-NO-STOP": "`idle` is the state during which background activity fails, not one it sends",
    "RFD-FAIL-CONTINUES-NO-STATE": "names `failed` as a state the agent must not invent; a `failed` state is the "
                                   "FAQ variant failed-state, whose rules it breaks",
    "S240-REQACTION-THEN-RUNNING": "orders running after requires_action: the family of `running` "
                                   "(S240-STATE-REPORT-RUNNING) sends another value where it is named",
    "S240-STATE-RESUME-RUNNING": "the same order on resumed work: the family of `running` covers the value",
    "S240-RESUME-RESPONSE-NOT-IDLE": "`idle` is what a client must not infer from a response, not a value sent",
    "S240-PROMPT-REJECT-NOT-IDLE": "`idle` is what a rejection must not cause: state_changes_only_with_work; "
                                   "the family of `idle` covers the value",
    "S240-STATE-RUNNING-BEFORE-INSERTION": "a permission (`running` may precede insertion): a witness, no value to "
                                           "break",
    "S240-STOP-CANCELLED-ONLY-WHEN-CANCELLED": "names `error` as what a failed cancellation may still say instead; "
                                               "the families of `cancelled` and `error` cover both values",
}


def _swap(named: Named, other):
    f = FIELDS[named.field]

    def change(c, msg):
        if msg[0] == f.kind and msg[f.index] == named.value:
            return [msg[:f.index] + (other,) + msg[f.index + 1:]]
        return [msg]

    def fix(pre, step):
        if named.where == "failure" and not any(m[0] == "state" and m[2] == "error" for _, m in step.emitted):
            return step
        return with_sent(pre, step, change)

    return fix


def _client_swap(named: Named, other):
    """A client's message (the last of its channel up) with the value swapped."""
    f = FIELDS[named.field]

    def fix(pre, step):
        if step.action[0] != "ClientAnswerPermission":
            return step
        c = step.action[1]
        up = step.state.up[c]
        msg = up[-1]
        if msg[0] != f.kind or msg[f.index] != named.value:
            return step
        ups = list(step.state.up)
        ups[c] = up[:-1] + (msg[:f.index] + (other,) + msg[f.index + 1:],)
        return step._replace(state=step.state._replace(up=tuple(ups)))

    return fix


_AGENT_GROUPS = ("agent_receive", "agent_prompts", "agent_work", "agent_faults")


def value_mutants() -> dict[str, Mutant]:
    """One mutant per named value and other value of its field: ``value:FIELD=VALUE->OTHER``."""
    out = {}
    for named in NAMED:
        for other in named.others():
            name = f"value:{named.field}={named.value}->{other or 'omitted'}"
            if FIELDS[named.field].sender == "agent":
                fix = _swap(named, other)
                patches = tuple(post("agent", g, fix) for g in _AGENT_GROUPS)
            else:
                patches = (post("clients", "clients", _client_swap(named, other)),)
            shown = "omitted" if other == "" else repr(other)
            out[name] = Mutant(
                name, f"sends {named.field} {shown} where its clause names {named.value!r}", named.clauses,
                named.kills, named.member, patches=patches, rules=named.rules)
    return out


#: the family, as ``sims.mutate.core.all_mutants`` reads a file of this package
MUTANTS = value_mutants()
