"""Rules written once: judges of the messages a participant observed.

A *judge* is one rule about messages, defined over typed records (``PromptResult``,
``StateUpdate``) that say what a participant sent or received, with named fields. The
same definition judges:

* a model run: ``successors`` gives each judge the records of what the model agent received
  and sent in a step (``events_of_step``, ``observe``); what they find travels with the step
  (``Step.found``) to the property of the same id (``model/properties``, built from ``JUDGES``);
* a transcript: ``trace`` (``model/monitor/``) gives each judge the record of every
  message of the log (``record_of_json``), as the wire rule of the same id
  (``model/wire_rules.py``, built from ``JUDGES``).

So a rule id has one level, one rule set, one list of clauses and one meaning, whichever
command reports it. The records are built from what is on the wire (or what the model
agent put on it), never from the model's own bookkeeping: a fault that writes the agent's
bookkeeping wrong does not write the verdict.

A judge reads one message at a time (``per="message"``), or keeps a state of its own over
what one connection carried (``per="connection"``: JSON-RPC ids are per connection), or one
session on one connection (``per="view"``), in the order the agent sent and received it: a
history variable, like TLA+'s, kept in the explored state (``System.seen``) and renamed with
it by the symmetry reduction. A judge of a whole session (``per="session"``) keeps its state per
connection too, but reads what every connection of the session carried: a ``session/cancel`` on
one connection ends the work every connection sees, a message inserted while a connection is in
the session is owed to it. No rule id is defined both here and elsewhere
(``tests/test_judges.py``).

The judges sit in one module per topic (``messages``, ``requests``, ``ending``, ``resume``,
``session``), like P's spec machines, one per family of rules; ``records`` builds the records,
``observe`` runs a set of judges (``JudgeSet``). ``CORE`` is the set of the core's judges, in the
order of ``System.seen``; a rule set that composes proposals (``model/proposals``) runs those and
the proposals' own.

>>> JUDGES["error_only_with_error_stop_reason"].judge(StateUpdate("idle", "end_turn", -32603))
"an idle with stopReason 'end_turn' carries an error object"
"""

from __future__ import annotations

from ..observed import (
    CancelRequest,
    Closed,
    Left,
    PromptError,
    PromptResult,
    Request,
    ResumeRequest,
    ResumeResult,
    Response,
    SessionCancel,
    Sent,
    StateUpdate,
    ToolUpdate,
    UserChunk,
    UserMessage,
)
from . import ending, messages, requests, resume, session
from ._judge import (
    SMALL,
    Cite,
    Items,
    Judge,
    Pairs,
    clause_of,
    pair_value,
    put_pair,
    rename_items,
    restate,
    sorted_tuple,
    union_items,
    with_item,
    without_item,
    without_pair,
)
from .observe import JudgeSet
from .records import SENT, events_of_step, record_of_client, record_of_json, record_of_model

__all__ = [
    "CORE",
    "Cite",
    "JUDGES",
    "STATEFUL",
    "CancelRequest",
    "Closed",
    "Left",
    "Items",
    "Judge",
    "JudgeSet",
    "Pairs",
    "PromptError",
    "PromptResult",
    "Request",
    "Response",
    "ResumeRequest",
    "ResumeResult",
    "SENT",
    "SessionCancel",
    "Sent",
    "StateUpdate",
    "ToolUpdate",
    "UserChunk",
    "UserMessage",
    "clause_of",
    "SMALL",
    "events_of_step",
    "judge",
    "observe",
    "observer",
    "pair_value",
    "put_pair",
    "record_of_client",
    "record_of_json",
    "record_of_model",
    "restate",
    "rename_items",
    "sorted_tuple",
    "start",
    "union_items",
    "with_item",
    "without_item",
    "without_pair",
]

#: The core's judges in one order: the order of ``System.seen`` and of the docs' tables
_ORDER = (
    "success_carries_message_id",
    "error_only_with_error_stop_reason",
    "custom_stop_reason_prefixed",
    "one_response_per_request",
    "every_prompt_answered",
    "cancelled_request_still_answered",
    "no_second_stop_reason",
    "chunked_replay_resets_first",
    "no_update_after_idle_of_its_work",
    "tools_terminal_before_error_idle",
    "resume_snapshot_before_response",
    "distinct_message_ids",
    "every_inserted_message_echoed",
    "cancelled_work_ends_cancelled",
    "no_replay_without_replay_from",
    "cancelled_only_when_cancelled",
)
_DEFINED = {j.id: j for m in (messages, requests, ending, resume, session) for j in m.JUDGES}
assert set(_DEFINED) == set(_ORDER), "a judge of a topic module is missing from _ORDER, or the other way"

#: every judge of the core, by id, in ``_ORDER``
JUDGES: dict[str, Judge] = {jid: _DEFINED[jid] for jid in _ORDER}

#: the core's judges as a set to run
CORE = JudgeSet(JUDGES.values())

#: the core's judges with a state, in the order of ``System.seen``
STATEFUL: tuple[Judge, ...] = CORE.stateful

#: the core's judge set's functions, for the core's rule sets
observe = CORE.observe
observer = CORE.observer
start = CORE.start
judge = CORE.judge
