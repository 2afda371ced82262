"""A runtime monitor of the v2 prompt lifecycle over JSON-RPC messages.

Pure and deterministic: no I/O. It reads a sequence of transcript entries
(``{"conn", "from", "msg"}``, ``{"conn", "event": "closed"}`` or
``{"conn", "from", "raw"}`` for a wire line that was not JSON) in the order
the agent read and wrote them, and reports each rule of the RFD and of the
2.4.0 schema text that the messages break. The same definitions judge a real
agent's transcript (``acp-lifecycle trace``) and the transcripts exported from
model runs (``sims.wire.transcript.export``).

What it tracks, and how (each choice is what the protocol says, not what is
convenient):

* **Connections** by their label. A connection whose ``initialize`` is in the
  log is *started*: its sessions are exactly those it created (the result of
  its ``session/new``, which may come after the first updates: "Updates may
  arrive before or after this response") or resumed (``session/resume``), until
  a response takes it out of one (``Message.leaves_session``). A log may start
  anywhere; a connection
  whose start is not in it gets the benefit of the doubt.
* **Requests per direction.** Each side numbers its own requests: a client
  request 3 and an agent request 3 can both be pending. A response pairs with a
  pending request *of the other side* with the same id, compared exactly as
  sent: ``1``, ``1.0`` and ``"1"`` are three ids, and an integer beyond 2^53 is
  compared digit for digit.
* **Sessions per connection** (a *view*: what one connection was told about
  one session: its last state and stop reason, the tool calls of its current
  work, its background list, acknowledged and echoed messages) and **sessions
  per agent** (message IDs returned by prompt responses are unique per session
  and, as 2.4.0 says, per message type: only user messages have IDs the wire
  ties to submissions).
* **A resume's replay is history.** Between a ``session/resume`` with
  ``replayFrom`` and its state snapshot, the agent "should replay retained
  conversation history before responding": tool calls of work that ended long
  ago may come back. The replay rules judge those updates (IDs, chunk resets,
  the snapshot after them); the live-work rules (the idle follows all updates
  of its work, a tool that was not approved does not run) judge live updates.

Rules (``RULES``, in ``model/wire_rules.py``) name their clause ids (``model/clauses/``) and the rule set
that makes them binding: ``rfd`` (the RFD, or JSON-RPC itself) or ``2.4.0``
(the normative text of the 2.4.0 schema). Under ``--rules rfd`` a 2.4.0-only
rule is reported as a warning; under the default ``rfd+2.4.0`` it is a
violation. A SHOULD is always a warning.

The monitor is one class in parts, a module each: ``base`` (reporting, feeding the judges,
reading an entry, requests, views), ``calls`` (what either side asks or notifies), ``updates``
(state updates), ``responses``, ``end`` (what must have happened by the end of the log).

>>> m = Monitor()
>>> for n, msg in enumerate([
...     {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}},
...     {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "m1"}},
... ], 1):
...     _ = m.feed(n, {"conn": "c", "from": "client" if n == 1 else "agent", "msg": msg})
>>> [f.property for f in m.finish()]
['prompt_not_empty', 'every_inserted_message_echoed']
"""

from __future__ import annotations

from ..wire_rules import DEFAULT_RULES, KNOWN_STOP_REASONS, RULE_SETS, RULES, V1_STOP_REASONS, Finding, Rule
from ..wire_state import RawFloat, id_key
from .base import MonitorBase
from .calls import CallsMixin
from .end import EndMixin
from .responses import ResponsesMixin
from .updates import UpdatesMixin

__all__ = [
    "DEFAULT_RULES",
    "Finding",
    "KNOWN_STOP_REASONS",
    "Monitor",
    "RULES",
    "RULE_SETS",
    "Rule",
    "RawFloat",
    "V1_STOP_REASONS",
    "check",
    "id_key",
]


# ---------------------------------------------------------------------------
# The monitor

class Monitor(MonitorBase, CallsMixin, UpdatesMixin, ResponsesMixin, EndMixin):
    """Feed transcript entries in order; ``finish()`` at the end of the log.

    ``rules``: ``"rfd"`` or ``"rfd+2.4.0"``. ``partial``: the log is cut, so
    rules about what must happen by the end are not applied. ``validator``:
    anything with ``check(msg, sender, request_method) -> [problem, ...]``
    (``sims.wire.schema.Validator``), or None.
    """


def check(entries, rules: str = DEFAULT_RULES, partial: bool = False, validator=None) -> list[Finding]:
    """Every finding of a whole transcript: ``entries`` is ``[(line, entry), ...]``."""
    m = Monitor(rules, partial, validator)
    for n, entry in entries:
        m.feed(n, entry)
    return m.finish()
