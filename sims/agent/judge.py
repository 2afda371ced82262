"""What the live model agent finds wrong on its connection: `trace`'s monitor over what it records.

Every line the agent records (in the order it read and wrote them, the order of its ``--record``
file) goes, as it is recorded, to the monitor of ``acp-lifecycle trace`` (``model/monitor/``, through
``sims.wire.transcript.monitor``), with the same rule set. The agent's report and ``trace`` on its
record therefore name the same rules at the same lines: one definition, not a second set of rules
for the client.

Whose a finding is: the side that wrote the line it is raised on (a second answer to a permission
request, a reused id, an answer to nothing: the client; an idle without its error object: the
agent); at the end of the log, a request that was never answered is the fault of the side it was
sent to (the agent's ``session/request_permission`` left unanswered when the client hung up: the
client), and what the agent still owed (an echo, an idle) is the agent's.

One judgement needs more than the record: whether the client had read the agent's
``$/cancel_request`` when it answered that permission request ``selected``
(``cancelled_permission_answered_cancelled``). No rule of ``trace`` can decide it from a record (the
answer may have crossed the cancel on the wire: docs/clauses.md, ``S240-PERM-CLIENT-ANSWERS-CANCELLED``);
the agent can, with its clock (``--grace``): the model client's rule judges it (``session.py``), and
the report says so (``"judge": "model"``).
"""

from __future__ import annotations

from acp_lifecycle.sims.wire.transcript import monitor

__all__ = ["WireJudge"]


class WireJudge:
    """``trace``'s monitor fed the agent's record line by line; ``findings()`` at the end."""

    def __init__(self, rules, validator=None):
        self.monitor = monitor(rules, validator=validator)
        self.agent_requests: set[int] = set()  # the lines of the agent's own requests
        self.raised: list[tuple[str, object]] = []  # (whose, Finding) as lines are fed
        self.finished: list[dict] | None = None

    def feed(self, line: int, entry: dict) -> None:
        msg = entry.get("msg")
        side = entry.get("from")
        if side == "agent" and isinstance(msg, dict) and "method" in msg and "id" in msg:
            self.agent_requests.add(line)
        for f in self.monitor.feed(line, entry):
            self.raised.append((side if side in ("client", "agent") else "agent", f))

    def findings(self) -> list[dict]:
        """Every finding of the record, in line order: ``Finding.data()`` with the rule's ``level``,
        ``by`` (whose it is: "client" or "agent") and ``judge`` ("trace")."""
        if self.finished is None:
            during = {id(f) for _, f in self.raised}
            at_end = [("client" if f.line in self.agent_requests else "agent", f)
                      for f in self.monitor.finish() if id(f) not in during]
            self.finished = sorted((dict(f.data(), level=f.rule.level if f.rule else "MUST", by=by, judge="trace")
                                    for by, f in self.raised + at_end), key=lambda d: (d["line"], d["property"]))
        return self.finished
