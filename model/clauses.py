"""The clause registry: every rule of the v2 prompt lifecycle the model cites.

A *clause* is one normative rule, quoted from its source. Properties of the
model, counterexample reports and the docs name rules by clause id (for
example ``RFD-INSERT-NO-EARLY-SUCCESS``) instead of paraphrasing them, so a
reader can always see the exact words a verdict rests on.

Two sources are quoted:

* ``"RFD"``: the v2 Prompt Lifecycle RFD, revision "2026-10-01: Report
  failures after insertion with an error stop reason that carries an optional
  JSON-RPC error". ``section`` is the RFD heading the sentence sits under.
* ``"2.4.0"``: the descriptions in ``schema/v2/schema.json`` of the npm package
  ``@agentclientprotocol/sdk@2.4.0``, the newest published v2 schema, which
  agrees with the RFD and adds rules the RFD leaves open. ``section`` is the
  schema ``$defs`` name holding the description; where the text sits on a
  variant of a union, the variant's title (or, untitled, its tag value)
  follows a slash (``"ClientRequest / PromptRequest"``,
  ``"IdleStateUpdate / cancelled"``). ``ProtocolLevel`` is the root ``anyOf``
  entry of that title, which holds ``$/cancel_request``.

Rule 1: ``text`` is VERBATIM. It is the whole sentence, with the exact
characters of the source: typographic quotes, backticks, and for 2.4.0 the
line breaks inside the schema description. A table row of the RFD is quoted
as one "sentence", its cells separated by the tab of the source. Never edit a
quote to make it read better; quote a different sentence instead.

Rule 2: the project never reads the sources at run or test time. They were
read once, when this file was written, and the quotes were checked against
them then (every RFD text is a substring of the RFD file; every 2.4.0 text is
a substring of a description in the schema). Re-check by hand when a source
changes.

Rule 3: ids are stable. ``RFD-<TOPIC>-<SHORT>`` or ``S240-<TOPIC>-<SHORT>``,
upper case with dashes. Never rename or reuse an id; a rule that disappears
from its source keeps its id and gains an ``out_of_scope`` reason.

Rule 4: every sentence of the RFD holding MUST, MUST NOT, SHOULD, SHOULD NOT
or NOT REQUIRED is here (16 sentences in the quoted revision). A sentence with
two rules gives two clauses, each quoting the whole sentence. The other
clauses are sentences without a capitalised keyword that the model relies on
(definitions, table rows, lower-case "must not"/"should not", open
questions); their ``level`` is the force the model gives them and their ids
are listed in ``IMPLIED_LEVEL``.

Rule 5: ``out_of_scope`` is empty exactly when a property of the model checks
the clause. Otherwise it is one sentence saying why no property checks it.
``CITATIONS`` below is the plan: which clause each property of the
model cites. A property that exposes a *known limitation* of the RFD (lost
responses, retries, cancellation races, resume state) still cites its
clauses: the model checks them by showing the counterexample.

Usage::

    >>> clause("RFD-INSERT-NO-EARLY-SUCCESS").level
    'MUST NOT'
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

__all__ = [
    "Clause",
    "CLAUSES",
    "IMPLIED_LEVEL",
    "LEVELS",
    "CITATIONS",
    "SOURCES",
    "clause",
]

#: The planned properties of the model (snake_case names) and the clause ids
#: each will cite. The property module is the authority once it exists; until
#: then this table is the plan it should follow, and ``tests/test_clauses.py``
#: checks that it names real clauses and agrees with ``out_of_scope``.
CITATIONS: dict[str, tuple[str, ...]] = {
    # --- the session/prompt response ------------------------------------
    "success_only_after_insertion": (
        "RFD-INSERT-NO-EARLY-SUCCESS",
        "RFD-INSERT-NOT-ACCEPTANCE",
        "RFD-INSERT-ADVANCE-ID",
        "RFD-INSERT-LOCAL-COMMAND",
        "S240-PROMPT-NEITHER-PRECEDES",
    ),
    "success_carries_message_id": (
        "RFD-INSERT-RESPONSE-ID",
        "S240-PROMPT-RETURN-ID",
    ),
    "rejected_prompt_never_inserted": (
        "RFD-INSERT-REJECT-ERROR",
        "RFD-ERROR-MEANS-NOT-INSERTED",
    ),
    "inserted_prompt_never_rejected": (
        "RFD-FAIL-NO-ERROR-RESPONSE",
        "RFD-FAIL-STILL-SUCCEEDS",
        "RFD-CANCELREQ-ONLY-BEFORE-INSERTION",
        "RFD-CANCELREQ-AFTER-INSERTION-SUCCEEDS",
        "S240-PROMPT-NO-ERROR-AFTER-INSERT",
    ),
    "one_response_per_request": ("S240-CANCELREQ-NO-SECOND-RESPONSE",),
    "every_prompt_answered": (
        "RFD-INSERT-RESPOND",
        "S240-PROMPT-RETURN-ID",
        "S240-CANCELREQ-STILL-RESPOND",
    ),
    # --- message IDs and echoes -----------------------------------------
    "distinct_message_ids": ("RFD-ID-DISTINCT", "RFD-ID-NO-REUSE"),
    "echo_names_an_inserted_message": (
        "RFD-ID-ECHO-SAME",
        "RFD-ECHO-EVERY",
        "RFD-ID-SAME-EVERYWHERE",
        "S240-PROMPT-NEITHER-PRECEDES",
    ),
    "rejected_submission_never_echoed": ("S240-PROMPT-REJECTED-NO-ECHO",),
    "every_inserted_message_echoed": (
        "RFD-ECHO-EVERY",
        "RFD-INSERT-LOCAL-COMMAND",
        "RFD-FAIL-NO-UNDO",
    ),
    # --- ending foreground work -----------------------------------------
    "failed_work_ends_with_error_idle": (
        "RFD-FAIL-ERROR-IDLE",
        "RFD-ERROR-MEANING",
        "RFD-FAIL-ANY-WORK",
    ),
    "cancelled_work_ends_cancelled": (
        "RFD-CANCEL-EVEN-IF-ABORT-FAILS",
        "RFD-ERROR-MEANING",
        "S240-CANCEL-IDLE-CANCELLED",
        "S240-STOP-CANCELLED-CATCH",
    ),
    "no_update_after_idle_of_its_work": (
        "RFD-IDLE-AFTER-ALL-UPDATES",
        "S240-CANCEL-UPDATES-BEFORE-IDLE",
    ),
    "tools_terminal_before_error_idle": ("RFD-FAIL-TOOLS-TERMINAL",),
    "error_only_with_error_stop_reason": ("RFD-ERROR-FIELD-ONLY",),
    "no_second_stop_reason": (
        "S240-STOP-REPEATED-NOT-COUNTED",
        "RFD-ERROR-ONLY-ENDING-FAILURES",
        "RFD-BACKGROUND-FAILURE-NO-STOP",
    ),
    "ended_work_reported_idle": (
        "S240-STATE-IDLE-WHEN-NONE",
        "S240-STATE-REPORT-IDLE",
        "RFD-PROCESS-EXIT-UNREPORTED",
    ),
    # --- clients ----------------------------------------------------------
    "single_canonical_copy": (
        "RFD-CLIENT-TOLERATE-ORDER",
        "RFD-CLIENT-RECONCILE",
    ),
    "association_points_at_own_submission": (
        "RFD-CLIENT-NO-INFER-SENDER",
        "RFD-LOST-NO-GUESS",
        "RFD-ID-IMPORTED",
    ),
    "client_content_matches_agent": (
        "RFD-REPLAY-CHUNK-RESET",
        "RFD-CLIENT-NO-APPEND-OPTIMISTIC",
    ),
    # --- replay -----------------------------------------------------------
    "replay_preserves_ids": ("RFD-REPLAY-SAME-ID", "RFD-COMMAND-REPLAY-SAME-ID"),
    "chunked_replay_resets_first": ("RFD-REPLAY-CHUNK-RESET",),
    "replayed_command_not_reexecuted": ("RFD-COMMAND-REPLAY-NO-EXEC",),
    "no_replay_without_replay_from": ("RFD-REPLAY-ONLY-WITH-REPLAY-FROM",),
    # --- known limitations and open questions (expected counterexamples) --
    "lost_response_recoverable": ("RFD-LOST-RESPONSE-AMBIGUOUS",),
    "retry_does_not_duplicate": (
        "RFD-RETRY-NOT-ASSUMED-SAFE",
        "RFD-RETRY-NEW-MESSAGE",
        "RFD-OPEN-RETRIES-OUTSIDE",
        "RFD-RETRY-DISTINCT",
    ),
    "client_completion_belief_is_true": ("RFD-STATE-SESSION-SCOPED",),
    "client_sees_current_state": (
        "S240-STATE-REPORT-RUNNING",
        "S240-STATE-NEW-IDLE",
        "RFD-FAIL-ERROR-IDLE",
    ),
    "session_cancel_stops_only_work_it_saw": (
        "RFD-OPEN-CANCEL-RACES",
        "S240-CANCEL-SCOPE",
    ),
    "resumed_client_sees_current_state": (
        "RFD-OPEN-RESUME-STATE",
        "S240-STATE-RESUME-SNAPSHOT",
        "S240-RESUME-STATE-BEFORE-RESPONSE",
    ),
}

SOURCES = ("RFD", "2.4.0")
LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "NOT REQUIRED", "MAY")


@dataclass(frozen=True, slots=True)
class Clause:
    """One normative rule, quoted verbatim from its source."""

    #: stable id, e.g. "RFD-INSERT-RESPOND"
    id: str
    #: "RFD" or "2.4.0"
    source: str
    #: one of LEVELS
    level: str
    #: the RFD heading, or the schema $defs name (and variant), it sits under
    section: str
    #: the whole sentence, verbatim
    text: str
    #: empty when the model checks it; else one sentence: why it does not
    out_of_scope: str = ""

    @property
    def in_scope(self) -> bool:
        return not self.out_of_scope


_C = Clause

# Section headings of the RFD, spelled as in the source.
_CHANGE = "Change the `session/prompt` response"
_CORRELATE = "Correlate prompts with accepted user messages"
_REPORTED = "User message reported to clients"
_REPLAY = "Correlation and replay"
_STREAM = "Streaming user messages"
_FAIL = "Report failures after insertion"
_PLAN = "Implementation details and plan"
_FAQ_TURN = "Does the returned ID identify a turn or the agent’s response?"
_FAQ_RETRY = "Does returning `messageId` make retrying safe?"
_FAQ_COMMANDS = "Do locally handled commands need persistent history?"

# Sentences that carry two rules (one clause per rule, whole sentence quoted).
_GUESS = (
    "Clients must not guess from content or order, or assume retrying cannot "
    "create a second submission."
)
_COMMAND_REPLAY = (
    "If the agent does retain and replay it, it uses the same ID and reports "
    "the message without executing the command again."
)
_FOLLOW_UPS = (
    "Broader v2 lifecycle follow-ups include cancellation races and "
    "current-state synchronization on resume."
)
_RUNNING_IDLE = (
    "Either way, the agent MUST report `running` when foreground work starts,\n"
    "or `requires_action` if it starts blocked on user action, and `idle` when it\n"
    "ends."
)
_CANCEL_UPDATES = (
    "The Agent MAY send content or tool call updates after receiving\n"
    "`session/cancel`, but MUST send them before the idle `state_update` that\n"
    "reports cancellation."
)
_CANCELREQ_IGNORE = (
    "Receivers MUST ignore this notification for an unknown or already-answered request ID,\n"
    "and MUST NOT send a second response for it."
)

_ALL: tuple[Clause, ...] = (
    # ===================================================================== RFD
    _C(
        "RFD-INSERT-NOT-ACCEPTANCE", "RFD", "MUST NOT", _CHANGE,
        "Receiving the request, assigning an ID, or holding the input for later "
        "insertion is not acceptance.",
    ),
    _C(
        "RFD-INSERT-RESPOND", "RFD", "MUST", _CHANGE,
        "The agent MUST respond successfully once the user message has been "
        "inserted, without waiting for foreground processing to finish.",
    ),
    _C(
        "RFD-INSERT-NO-EARLY-SUCCESS", "RFD", "MUST NOT", _CHANGE,
        "It MUST NOT send a successful response before insertion.",
    ),
    _C(
        "RFD-INSERT-RESPONSE-ID", "RFD", "MUST", _CHANGE,
        "The proposed successful response MUST include the inserted message’s "
        "messageId as a non-null string; omission and explicit null are both invalid.",
    ),
    _C(
        "RFD-INSERT-REJECT-ERROR", "RFD", "MUST", _CHANGE,
        "A request rejected before insertion uses a JSON-RPC error response instead.",
    ),
    _C(
        "RFD-INSERT-LOCAL-COMMAND", "RFD", "MUST", _CHANGE,
        "Locally handled commands follow the same rule by inserting a live-only "
        "user message into the ACP conversation, without requiring a persisted "
        "transcript entry.",
    ),
    _C(
        "RFD-ID-DISTINCT", "RFD", "MUST", _CORRELATE,
        "The agent MUST assign a distinct messageId to each accepted submission, "
        "even when its content is identical to another submission.",
    ),
    _C(
        "RFD-ID-NO-REUSE", "RFD", "MUST NOT", _CORRELATE,
        "IDs are unique within the session and MUST NOT be reused for a different "
        "submission.",
    ),
    _C(
        "RFD-ID-ECHO-SAME", "RFD", "MUST", _CORRELATE,
        "The agent MUST use the returned ID for all updates and chunks for that "
        "user message.",
    ),
    _C(
        "RFD-CLIENT-TOLERATE-ORDER", "RFD", "MUST", _CORRELATE,
        "The response and the user-message update describe the same insertion, "
        "but clients MUST tolerate those updates arriving before or after the "
        "response.",
    ),
    _C(
        "RFD-CLIENT-RECONCILE", "RFD", "MUST", _CORRELATE,
        "On receiving the response, the submitting client can associate its local "
        "pending input with (sessionId, messageId), reconciling with an "
        "already-received message rather than creating a second canonical message.",
    ),
    _C(
        "RFD-CLIENT-NO-INFER-SENDER", "RFD", "SHOULD NOT", _CORRELATE,
        "Neither content equality nor notification arrival order should be used "
        "to infer which client submitted a message.",
    ),
    _C(
        "RFD-INSERT-ADVANCE-ID", "RFD", "MUST NOT", _CORRELATE,
        "An ID assigned in advance is not by itself evidence of insertion.",
    ),
    _C(
        "RFD-ECHO-EVERY", "RFD", "MUST", _REPORTED,
        "The agent MUST report each inserted user message through user_message or "
        "user_message_chunk updates, using the same messageId.",
    ),
    _C(
        "RFD-QUEUE-UNSPECIFIED", "RFD", "MAY", _REPORTED,
        "This RFD does not specify queueing, steering, or whether agents insert "
        "new prompts while busy.",
        out_of_scope=(
            "The RFD leaves queueing unspecified, so the model lets an agent hold "
            "or insert a prompt while busy and no property judges that choice."
        ),
    ),
    _C(
        "RFD-ID-SAME-EVERYWHERE", "RFD", "MUST", _REPLAY,
        "The response and all updates for the accepted user message MUST use the "
        "same messageId.",
    ),
    _C(
        "RFD-RETAIN-NOT-REQUIRED", "RFD", "NOT REQUIRED", _REPLAY,
        "Agents are NOT REQUIRED to persist every accepted input or retain it for "
        "any minimum period.",
        out_of_scope=(
            "Durable storage is not observable on the wire and a permission cannot "
            "be violated, so the model only explores retained and live-only "
            "messages without checking anything about retention."
        ),
    ),
    _C(
        "RFD-REPLAY-SAME-ID", "RFD", "MUST", _REPLAY,
        "If an agent retains and replays that same message within the session, it "
        "MUST reuse the returned messageId, including after reconnecting or "
        "restarting.",
    ),
    _C(
        "RFD-CLIENT-NO-ASSUME-RETAINED", "RFD", "MUST NOT", _REPLAY,
        "Clients MUST NOT assume that every acknowledged message will appear after "
        "resuming a session.",
        out_of_scope=(
            "It constrains what a client expects of a replay, and no planned "
            "property inspects client expectations; the model only explores "
            "acknowledged live-only messages that are missing from replay."
        ),
    ),
    _C(
        "RFD-REPLAY-ONLY-WITH-REPLAY-FROM", "RFD", "MUST NOT", _REPLAY,
        "Omitting replayFrom resumes without replay.",
    ),
    _C(
        "RFD-LOST-RESPONSE-AMBIGUOUS", "RFD", "NOT REQUIRED", _REPLAY,
        "A lost response remains an ambiguous outcome.",
    ),
    _C("RFD-LOST-NO-GUESS", "RFD", "MUST NOT", _REPLAY, _GUESS),
    _C("RFD-RETRY-NOT-ASSUMED-SAFE", "RFD", "MUST NOT", _REPLAY, _GUESS),
    _C(
        "RFD-ID-IMPORTED", "RFD", "MUST", _REPLAY,
        "Imported or non-ACP messages continue to use agent-generated message IDs "
        "without a corresponding prompt response.",
    ),
    _C(
        "RFD-REPLAY-CHUNK-RESET", "RFD", "MUST", _STREAM,
        "When replay reconstructs a user message from its beginning using chunks, "
        "the agent MUST first send a user_message update with content: [].",
    ),
    _C(
        "RFD-CLIENT-NO-APPEND-OPTIMISTIC", "RFD", "SHOULD NOT", _STREAM,
        "When reconciling an optimistic message, clients should not append "
        "streamed content to their local copy of the submitted prompt; the "
        "agent’s content stream is authoritative.",
    ),
    _C(
        "RFD-FAIL-ERROR-IDLE", "RFD", "MUST", _FAIL,
        "When foreground work ends because of a failure after the user message was "
        "inserted, the Agent reports idle with the error stop reason and, when it "
        "has one, the error:",
    ),
    _C(
        "RFD-ERROR-MEANING", "RFD", "MUST", _FAIL,
        'stopReason: "error" means foreground work ended because something failed, '
        "not because it finished, reached a limit, was refused, or was cancelled.",
    ),
    _C(
        "RFD-FAIL-ANY-WORK", "RFD", "MUST", _FAIL,
        "It applies to any foreground work, including work no prompt started; the "
        "insertion rule below is specific to session/prompt.",
    ),
    _C(
        "RFD-ERROR-DETAILS", "RFD", "SHOULD", _FAIL,
        "The Agent SHOULD include it, and Clients may show message to the user.",
        out_of_scope=(
            "The model agent always includes the error object (-32000), so the "
            "SHOULD is met by construction; an error idle without details is valid "
            "on the wire and no property flags it or checks what a client displays."
        ),
    ),
    _C(
        "RFD-ERROR-FIELD-ONLY", "RFD", "MUST", _FAIL,
        "error exists only on the error stop reason, the same way stopReason "
        "exists only on the idle state.",
    ),
    _C(
        "RFD-FAIL-NO-ERROR-RESPONSE", "RFD", "MUST NOT", _FAIL,
        "Once the user message is inserted, the Agent MUST NOT report a later "
        "failure as an error response to session/prompt, even if it has not sent "
        "the response yet.",
    ),
    _C(
        "RFD-FAIL-STILL-SUCCEEDS", "RFD", "MUST", _FAIL,
        "The request succeeds with the inserted messageId, and the failure ends "
        "foreground work as above.",
    ),
    _C(
        "RFD-ERROR-MEANS-NOT-INSERTED", "RFD", "MUST", _FAIL,
        "A JSON-RPC error on session/prompt therefore always means the message was "
        "not inserted.",
    ),
    _C(
        "RFD-CANCELREQ-ONLY-BEFORE-INSERTION", "RFD", "MUST", _FAIL,
        "This includes request cancellation: a $/cancel_request or internal "
        "cancellation answers session/prompt with -32800 only before insertion.",
    ),
    _C(
        "RFD-CANCELREQ-AFTER-INSERTION-SUCCEEDS", "RFD", "MUST", _FAIL,
        "Afterwards the request still succeeds with the messageId, and the work is "
        "stopped with session/cancel.",
    ),
    _C(
        "RFD-IDLE-AFTER-ALL-UPDATES", "RFD", "MUST", _FAIL,
        "As with every stop reason, the idle update follows all updates for the "
        "work that ended.",
    ),
    _C(
        "RFD-FAIL-TOOLS-TERMINAL", "RFD", "SHOULD", _FAIL,
        "Before sending it, the Agent SHOULD give each tool call that the failed "
        "work left unfinished a terminal status, using failed for calls that did "
        "not complete.",
    ),
    _C(
        "RFD-FAIL-NO-UNDO", "RFD", "MUST NOT", _FAIL,
        "A failure does not undo the insertion or any side effects the work "
        "already had, such as tools that ran.",
    ),
    _C(
        "RFD-RETRY-NEW-MESSAGE", "RFD", "MAY", _FAIL,
        "Sending the prompt again submits a new message; see Does returning "
        "messageId make retrying safe?.",
    ),
    _C(
        "RFD-ERROR-ONLY-ENDING-FAILURES", "RFD", "MUST", _FAIL,
        "The error stop reason is only for failures that end foreground work:",
    ),
    _C(
        "RFD-CANCEL-EVEN-IF-ABORT-FAILS", "RFD", "MUST", _FAIL,
        "Work is cancelled, even if aborting raises errors\tIdle `state_update` "
        'with `stopReason: "cancelled"`, as the cancellation rules already require',
    ),
    _C(
        "RFD-BACKGROUND-FAILURE-NO-STOP", "RFD", "MUST NOT", _FAIL,
        "Background activity fails while the Agent is `idle`\tNot a stop reason, "
        "since no foreground work ended",
    ),
    _C(
        "RFD-PROCESS-EXIT-UNREPORTED", "RFD", "NOT REQUIRED", _FAIL,
        "The Agent process exits or the connection is lost\tDetected by the "
        "Client; no update can report it",
    ),
    _C("RFD-OPEN-CANCEL-RACES", "RFD", "NOT REQUIRED", _PLAN, _FOLLOW_UPS),
    _C("RFD-OPEN-RESUME-STATE", "RFD", "NOT REQUIRED", _PLAN, _FOLLOW_UPS),
    _C(
        "RFD-OPEN-RETRIES-OUTSIDE", "RFD", "NOT REQUIRED", _PLAN,
        "Queueing, steering, sender identity, safe retries, and idempotency "
        "guarantees remain outside this change.",
    ),
    _C(
        "RFD-STATE-SESSION-SCOPED", "RFD", "MUST NOT", _FAQ_TURN,
        "Agent messages and tool calls retain their own IDs; state_update remains session-scoped.",
    ),
    _C(
        "RFD-RETRY-DISTINCT", "RFD", "MAY", _FAQ_RETRY,
        "A retry can be accepted as a distinct submission with a different ID, "
        "including after a lost response.",
    ),
    _C("RFD-COMMAND-REPLAY-SAME-ID", "RFD", "MUST", _FAQ_COMMANDS, _COMMAND_REPLAY),
    _C("RFD-COMMAND-REPLAY-NO-EXEC", "RFD", "MUST NOT", _FAQ_COMMANDS, _COMMAND_REPLAY),
    # =================================================================== 2.4.0
    _C(
        "S240-CANCELREQ-STILL-RESPOND", "2.4.0", "MUST",
        "ProtocolLevel / CancelRequestNotification",
        "MUST still send a response for the original request.",
    ),
    _C(
        "S240-CANCELREQ-IGNORE-ANSWERED", "2.4.0", "MUST",
        "ProtocolLevel / CancelRequestNotification", _CANCELREQ_IGNORE,
        out_of_scope=(
            "No planned property checks that a $/cancel_request for an "
            "already-answered prompt leaves its work running; only the "
            "second-response half of the sentence is checked."
        ),
    ),
    _C(
        "S240-CANCELREQ-NO-SECOND-RESPONSE", "2.4.0", "MUST NOT",
        "ProtocolLevel / CancelRequestNotification", _CANCELREQ_IGNORE,
    ),
    _C(
        "S240-RESUME-STATE-BEFORE-RESPONSE", "2.4.0", "MUST", "ResumeSessionResponse",
        "The agent MUST send a current `state_update` after any requested history\n"
        "replay and before this response, even without replay.",
    ),
    _C(
        "S240-STOP-REPEATED-NOT-COUNTED", "2.4.0", "MUST NOT", "IdleStateUpdate",
        "They MUST NOT be counted as new completions, cancellations, or additional usage.",
    ),
    _C(
        "S240-STOP-CANCELLED-CATCH", "2.4.0", "MUST", "IdleStateUpdate / cancelled",
        "Agents MUST catch these errors and report `cancelled`, not\n`error`.",
    ),
    _C(
        "S240-STATE-REPORT-RUNNING", "2.4.0", "MUST", "StateUpdate", _RUNNING_IDLE,
    ),
    _C("S240-STATE-REPORT-IDLE", "2.4.0", "MUST", "StateUpdate", _RUNNING_IDLE),
    _C(
        "S240-STATE-NEW-IDLE", "2.4.0", "MUST", "StateUpdate",
        "A new session defaults to idle until a state update reports otherwise.",
    ),
    _C(
        "S240-STATE-RESUME-SNAPSHOT", "2.4.0", "MUST", "StateUpdate",
        "Resume MUST send a current-state snapshot after any replay and before its\n"
        "response.",
    ),
    _C(
        "S240-STATE-IDLE-WHEN-NONE", "2.4.0", "MUST", "StateUpdate",
        "The agent MUST report `idle` when no foreground activity remains.",
    ),
    _C(
        "S240-PROMPT-RETURN-ID", "2.4.0", "MUST", "ClientRequest / PromptRequest",
        "The Agent MUST return the inserted message's ID without waiting for\n"
        "processing to finish.",
    ),
    _C(
        "S240-PROMPT-NEITHER-PRECEDES", "2.4.0", "MUST NOT",
        "ClientRequest / PromptRequest",
        "This notification may arrive before or after the response, but neither may\n"
        "precede insertion.",
    ),
    _C(
        "S240-PROMPT-NO-ERROR-AFTER-INSERT", "2.4.0", "MUST NOT",
        "ClientRequest / PromptRequest",
        "Once it is\ninserted, the Agent MUST NOT answer with an error, even if the "
        "work fails\nbefore the response is sent.",
    ),
    _C(
        "S240-PROMPT-REJECTED-NO-ECHO", "2.4.0", "MUST NOT",
        "ClientRequest / PromptRequest",
        "A rejected submission produces no user-message updates.",
    ),
    _C(
        "S240-CANCEL-SCOPE", "2.4.0", "MUST",
        "ClientNotification / CancelSessionNotification",
        "Cancels a session's foreground work and its prompts not yet inserted.",
    ),
    _C(
        "S240-CANCEL-IDLE-CANCELLED", "2.4.0", "MUST",
        "ClientNotification / CancelSessionNotification",
        "After all ongoing operations have been successfully aborted and pending\n"
        "updates have been sent, the Agent MUST send an idle `state_update` session\n"
        "update with the `cancelled` stop reason if cancellation ended active\n"
        "foreground work.",
    ),
    _C(
        "S240-CANCEL-UPDATES-MAY", "2.4.0", "MAY",
        "ClientNotification / CancelSessionNotification", _CANCEL_UPDATES,
        out_of_scope=(
            "A permission that no agent behaviour can violate: the model lets "
            "cancelled work emit updates after session/cancel, and only their "
            "order (S240-CANCEL-UPDATES-BEFORE-IDLE) is checked."
        ),
    ),
    _C(
        "S240-CANCEL-UPDATES-BEFORE-IDLE", "2.4.0", "MUST",
        "ClientNotification / CancelSessionNotification", _CANCEL_UPDATES,
    ),
)

#: All clauses by id, in source order: the RFD first, then the 2.4.0 clauses in
#: the order their text occurs in ``schema.json``.
CLAUSES: dict[str, Clause] = {c.id: c for c in _ALL}
assert len(CLAUSES) == len(_ALL), "duplicate clause id"

#: Clauses whose sentence has no capitalised keyword: their level is the force
#: the model gives the sentence (a definition, a table row, a lower-case
#: "must not"/"should not", or an open question read as NOT REQUIRED).
IMPLIED_LEVEL: frozenset[str] = frozenset({
    "RFD-INSERT-NOT-ACCEPTANCE",
    "RFD-INSERT-REJECT-ERROR",
    "RFD-INSERT-LOCAL-COMMAND",
    "RFD-CLIENT-RECONCILE",
    "RFD-CLIENT-NO-INFER-SENDER",
    "RFD-INSERT-ADVANCE-ID",
    "RFD-QUEUE-UNSPECIFIED",
    "RFD-REPLAY-ONLY-WITH-REPLAY-FROM",
    "RFD-LOST-RESPONSE-AMBIGUOUS",
    "RFD-LOST-NO-GUESS",
    "RFD-RETRY-NOT-ASSUMED-SAFE",
    "RFD-ID-IMPORTED",
    "RFD-CLIENT-NO-APPEND-OPTIMISTIC",
    "RFD-FAIL-ERROR-IDLE",
    "RFD-ERROR-MEANING",
    "RFD-FAIL-ANY-WORK",
    "RFD-ERROR-FIELD-ONLY",
    "RFD-FAIL-STILL-SUCCEEDS",
    "RFD-ERROR-MEANS-NOT-INSERTED",
    "RFD-CANCELREQ-ONLY-BEFORE-INSERTION",
    "RFD-CANCELREQ-AFTER-INSERTION-SUCCEEDS",
    "RFD-IDLE-AFTER-ALL-UPDATES",
    "RFD-FAIL-NO-UNDO",
    "RFD-RETRY-NEW-MESSAGE",
    "RFD-ERROR-ONLY-ENDING-FAILURES",
    "RFD-CANCEL-EVEN-IF-ABORT-FAILS",
    "RFD-BACKGROUND-FAILURE-NO-STOP",
    "RFD-PROCESS-EXIT-UNREPORTED",
    "RFD-OPEN-CANCEL-RACES",
    "RFD-OPEN-RESUME-STATE",
    "RFD-OPEN-RETRIES-OUTSIDE",
    "RFD-STATE-SESSION-SCOPED",
    "RFD-RETRY-DISTINCT",
    "RFD-COMMAND-REPLAY-SAME-ID",
    "RFD-COMMAND-REPLAY-NO-EXEC",
    "S240-STATE-NEW-IDLE",
    "S240-PROMPT-NEITHER-PRECEDES",
    "S240-PROMPT-REJECTED-NO-ECHO",
    "S240-CANCEL-SCOPE",
})


def clause(cid: str) -> Clause:
    """The clause with id ``cid``; ``KeyError`` naming it and near ids if none.

    Near ids are close spellings (case and underscores ignored), else ids of
    the same source and topic: ``clause("rfd_insert_respond")`` suggests
    ``RFD-INSERT-RESPOND`` first.

    >>> clause("NOPE")
    Traceback (most recent call last):
    ...
    KeyError: "no clause 'NOPE'; no similar id"
    """
    try:
        return CLAUSES[cid]
    except (KeyError, TypeError):
        pass
    key = str(cid).strip().upper().replace("_", "-")
    near = difflib.get_close_matches(key, CLAUSES, n=5, cutoff=0.6)
    if key in CLAUSES and key not in near:
        near.insert(0, key)
    if not near:
        # Same source and topic, e.g. every "RFD-REPLAY-..." for "RFD-REPLAY-X".
        prefix = "-".join(key.split("-")[:2]) + "-"
        near = [i for i in CLAUSES if i.startswith(prefix)][:5]
    hint = f"; did you mean: {', '.join(near)}" if near else "; no similar id"
    raise KeyError(f"no clause {cid!r}{hint}") from None
