"""What a search node of ``trace --model`` may forget: settled history.

A node of the search (``sims.wire.modeltrace``) is a model state, a position in
the log and the raw <-> model id bindings. Left alone, all three grow with the
log: the agent keeps every request and message (``Agent.reqs``, ``Agent.conv``,
``Agent.issued``), each client every submission and its view of the
conversation, the judges every message ID they saw (``System.seen``), and the
bindings every id the log named. Hashing, comparing and copying a node then
costs time in proportion to the log, and the search is quadratic.

At a *settled* point (``settled``) nothing of that history can be read again:
no request is open, no message is owed an echo, no work runs, nothing is in
flight, no client has a submission it could still retry, associate or cancel.
``forget_settled`` then keeps only the counters and flags a later step reads,
and the node keeps no binding: every model id it bound is dead (a later step
makes fresh ones). ``RawIds`` keeps the one fact the dropped bindings still
carried, that a raw id was bound, without storing it in the node: which raw ids
a node bound depends only on the lines it matched, so it is read off the log.
The argument, field by field, is in docs/transcripts.md ("Search nodes keep
what the future can read").

Only under the rule sets ``RULE_SETS`` names (as ``explain`` adjusts them), the
model's own parts (no mutant), opaque message IDs and without replay in the log
(``compacts``): a bug or a variant may read history the correct agent does not.
"""

from __future__ import annotations

from acp_lifecycle.model.config import RULE_SETS, Rules
from acp_lifecycle.model.judges import start
from acp_lifecycle.model.symmetry import ids_opaque

__all__ = ["RawIds", "compacts", "explain_rules", "forget_seen", "forget_settled", "line_ids", "settled"]

#: the phases of a request no step moves on from
_FINAL = ("answered", "rejected", "dropped")


def explain_rules(rules: Rules) -> Rules:
    """``rules`` as ``explain`` searches with them (lenient; "must" read as "later")."""
    rules = rules.with_(lenient=True)
    if rules.cancel_rejects_held == "must":
        rules = rules.with_(cancel_rejects_held="later")
    return rules


_STANDARD = {explain_rules(r).with_(name="") for r in RULE_SETS.values()}


def compacts(rules: Rules, retain: bool) -> bool:
    """May settled history be forgotten under ``rules``? Only for a named rule set with the
    model's own parts and opaque message IDs, and when every message is kept retained
    (``retain``: no replay in the log, so no message is ever sent again)."""
    return retain and rules.parts is None and ids_opaque(rules) and rules.with_(name="") in _STANDARD


def forget_seen(s):
    """The state with the judges' memory (``System.seen``) back at its start: a history
    variable no participant reads, and ``trace --model`` reads no judge's finding."""
    fresh = start(len(s.clients))
    return s if s.seen == fresh else s._replace(seen=fresh)


def settled(s) -> bool:
    """Is the history of ``s`` settled: nothing in flight, no work, every request final and
    answered (or dropped), every message echoed, every submission final with its message ID
    known, no permission request, resume or buggy leftover open?"""
    if any(s.up) or any(s.down):
        return False
    a = s.agent
    if a.work is not None or a.pending or a.stragglers:
        return False
    if any(m.owed for m in a.conv):
        return False
    if any(r.phase not in _FINAL or not (r.answers or r.orphan or r.phase == "dropped") for r in a.reqs):
        return False
    for cl in s.clients:
        if cl.perms or cl.resuming or cl.done:
            return False
        if any(not (sub.status == "rejected" or (sub.status == "acknowledged" and sub.mid)) for sub in cl.subs):
            return False
    return True


def forget_settled(s):
    """A settled state without its history: no requests, messages, issued IDs, ended tool
    calls, submissions or views, the message counter back at 1 (every ID is dead, so any
    is fresh), the judges' memory at its start. Counters, budgets, flags and the last
    reported state stay."""
    a = s.agent
    if not (a.reqs or a.conv or a.issued or a.ended_tools or a.next_id != 1
            or any(cl.subs or cl.view for cl in s.clients)):
        return forget_seen(s)
    agent = a._replace(reqs=(), conv=(), issued=(), ended_tools=frozenset(), next_id=1)
    clients = tuple(cl._replace(subs=(), view=()) for cl in s.clients)
    return forget_seen(s._replace(agent=agent, clients=clients))


def line_ids(line) -> tuple:
    """The raw ids a transcript line binds when a model message matches it, as
    ((namespace, raw), ...): the same namespaces as ``modeltrace._unify``."""
    t = line.msg
    k = t[0]
    if k in ("prompt", "cancel_req", "resume", "err", "v1_prompt_result", "resumed"):
        return (("rid:" + line.label, t[1]),)
    if k == "ok":
        return (("rid:" + line.label, t[1]), ("mid", t[2]))
    if k in ("perm", "perm_cancel", "perm_ans"):
        return (("perm", t[1]),)
    if k in ("user_message", "chunk"):
        return (("mid", t[1]),)
    if k == "tool":
        return (("tool", t[1]),)
    return ()


class RawIds:
    """Which raw ids a node has bound, read off the log: a node at position ``pos``
    with the lines ``ahead`` matched out of order bound exactly the ids of those
    lines (a binding, once made, was never undone before ``forget_settled``)."""

    def __init__(self, lines: list) -> None:
        self.lines = lines
        self.first: dict = {}
        for q, line in enumerate(lines):
            for key in line_ids(line):
                self.first.setdefault(key, q)

    def bound(self, ns: str, raw, pos: int, ahead: frozenset) -> bool:
        q = self.first.get((ns, raw))
        if q is None:
            return False
        if q < pos:
            return True
        return any((ns, raw) in line_ids(self.lines[x]) for x in ahead)
