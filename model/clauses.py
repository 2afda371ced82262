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
  ``"IdleStateUpdate / cancelled"``), and where it sits on a property, the
  property's name (``"PromptResponse / messageId"``). ``ProtocolLevel`` is the
  root ``anyOf`` entry of that title, which holds ``$/cancel_request``.

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
the clause. Otherwise it is one sentence saying why no property checks it: a
rule only the wire shows (the model has one session, which exists before the
run starts), a permission the model agent does not use, something the model
does not have (session/close, background work), or, plainly, that no property
judges it yet. A permission (``MAY``) the model agent does use is cited by the
``sometimes`` witness that shows the choice is explored.
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
from dataclasses import dataclass, replace

__all__ = [
    "Clause",
    "CLAUSES",
    "IMPLIED_LEVEL",
    "LEVELS",
    "CITATIONS",
    "SOURCES",
    "WIRE_REASONS",
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
        "S240-PROMPT-ACCEPTANCE",
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
        "S240-CANCELREQ-RESULT",
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
        "S240-RESPONSE-ECHO-LIVE",
    ),
    # --- ending foreground work -----------------------------------------
    "failed_work_ends_with_error_idle": (
        "RFD-FAIL-ERROR-IDLE",
        "RFD-ERROR-MEANING",
        "RFD-FAIL-ANY-WORK",
        "S240-PROMPT-FAILURE-ERROR-STOP",
        "RFD-NOTICE-NOT-FATAL",
        "S240-NOTICE-NOT-RELIED-ON",
    ),
    "cancelled_work_ends_cancelled": (
        "RFD-CANCEL-EVEN-IF-ABORT-FAILS",
        "RFD-ERROR-MEANING",
        "S240-CANCEL-IDLE-CANCELLED",
        "S240-STOP-CANCELLED-CATCH",
        "S240-STOP-CANCELLED-REPORT",
        "S240-CANCEL-ABORT-ERRORS",
    ),
    "no_update_after_idle_of_its_work": (
        "RFD-IDLE-AFTER-ALL-UPDATES",
        "S240-CANCEL-UPDATES-BEFORE-IDLE",
    ),
    "tools_terminal_before_error_idle": ("RFD-FAIL-TOOLS-TERMINAL",),
    "error_only_with_error_stop_reason": ("RFD-ERROR-FIELD-ONLY",),
    "no_second_stop_reason": (
        "S240-STOP-REPEATED-NOT-COUNTED",
    ),
    "ended_work_reported_idle": (
        "S240-STATE-IDLE-WHEN-NONE",
        "S240-STATE-REPORT-IDLE",
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
        "S240-UPSERT-CONTENT-REPLACES",
        "RFD-METADATA-NO-CLEAR",
        "S240-UPSERT-OMITTED-UNCHANGED",
    ),
    # --- replay -----------------------------------------------------------
    "replay_preserves_ids": (
        "RFD-REPLAY-SAME-ID",
        "RFD-COMMAND-REPLAY-SAME-ID",
        "S240-RESPONSE-REPLAY-KEEPS-ID",
    ),
    "chunked_replay_resets_first": (
        "RFD-REPLAY-CHUNK-RESET",
        "RFD-METADATA-NOT-RESET",
    ),
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
        "S240-REQACTION-THEN-RUNNING",
        "S240-STATE-RESUME-RUNNING",
        "S240-STOP-OMITTED-NOT-REPORTED",
        "RFD-CLIENT-UNKNOWN-STOP-ENDS",
    ),
    "session_cancel_stops_only_work_it_saw": ("RFD-OPEN-CANCEL-RACES",),
    "resumed_client_sees_current_state": (
        "RFD-OPEN-RESUME-STATE",
        "S240-STATE-RESUME-SNAPSHOT",
        "S240-RESUME-STATE-BEFORE-RESPONSE",
        "S240-RESUME-RESPONSE-NOT-IDLE",
    ),
    # --- added with the rule sets (2.4.0) and the allowed choices ---
    "answered_before_its_work_ends": (
        "RFD-INSERT-RESPOND",
        "S240-PROMPT-RETURN-ID",
    ),
    "cancelled_prompt_never_inserted": (
        "S240-CANCEL-SCOPE",
    ),
    "error_idle_only_for_failure": (
        "RFD-ERROR-MEANING",
        "RFD-ERROR-ONLY-ENDING-FAILURES",
        "RFD-BACKGROUND-FAILURE-NO-STOP",
    ),
    "cancelled_idle_only_for_cancel": (
        "S240-STOP-CANCELLED-ONLY-WHEN-CANCELLED",
    ),
    "state_changes_only_with_work": (
        "RFD-FAIL-CONTINUES-NO-STATE",
        "RFD-NOTICE-NO-STATE",
        "S240-STATE-BACKGROUND-NO-CHANGE",
        "S240-STATE-REJECT-NOT-END",
        "S240-PROMPT-REJECT-NOT-IDLE",
    ),
    "idle_ending_work_has_stop_reason": (
        "S240-STOP-SHOULD-INCLUDE",
    ),
    "error_idle_carries_details": (
        "RFD-ERROR-DETAILS",
        "S240-ERROR-DETAILS-SHOULD",
    ),
    "stop_reason_known_or_custom": (
        "S240-STOP-UNKNOWN-RESERVED",
    ),
    "cancelled_work_ends": (
        "S240-CANCEL-IDLE-CANCELLED",
        "S240-CANCEL-PERM-STOP-WAITING",
    ),
    "cancelled_work_never_resumes": (
        "S240-CANCEL-PERM-STOP-WAITING",
    ),
    "late_answer_ignored": (
        "S240-STATE-IGNORE-LATE-RESPONSES",
        "S240-CANCEL-IGNORE-LATE-ANSWERS",
    ),
    "cancelled_permission_requests_cancelled": (
        "S240-CANCEL-PERM-CANCEL-REQUEST",
        "S240-PERM-AGENT-CANCELS",
    ),
    "client_answers_cancelled_permission": (
        "S240-PERM-CLIENT-ANSWERS-CANCELLED",
    ),
    "cancelled_permission_answered_cancelled": (
        "S240-PERM-CLIENT-ANSWERS-CANCELLED",
    ),
    "sometimes_error_idle_without_details": (
        "RFD-ERROR-OPTIONAL",
    ),
    "sometimes_custom_stop_reason": (
        "S240-STOP-CUSTOM-UNDERSCORE",
    ),
    "sometimes_update_after_cancel": (
        "S240-CANCEL-UPDATES-MAY",
    ),
    "sometimes_queued_insert": (
        "RFD-QUEUE-UNSPECIFIED",
    ),
    "sometimes_running_before_insertion": (
        "S240-STATE-RUNNING-BEFORE-INSERTION",
    ),
    "sometimes_acknowledged_live_only_not_replayed": (
        "RFD-RETAIN-NOT-REQUIRED",
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
    #: empty when a rule of the transcript monitor (model/monitor.py) judges it; else why no
    #: transcript can show it broken ("not on the wire: ..."; see WIRE_REASONS)
    wire: str = ""

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
_FAQ_NOTICE = "Report failures after insertion with an error-severity notice"

# Sentences that carry two rules (one clause per rule, whole sentence quoted).
_GUESS = (
    "Clients must not guess from content or order, or assume retrying cannot "
    "create a second submission."
)
_COMMAND_REPLAY = (
    "If the agent does retain and replay it, it uses the same ID and reports "
    "the message without executing the command again."
)
_METADATA_ONLY = (
    "A metadata-only update does not clear content and is not sufficient for "
    "restarting the message’s content from the beginning."
)
_NOTICES = (
    "Clients may ignore them, and they must not report fatal errors or change "
    "session state."
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

_BACKGROUND_ITEMS = (
    "The Agent MUST announce each item\n"
    "before the first snapshot that lists it, and MUST report a terminal's `exitStatus` or a\n"
    "tool call's final status before the snapshot that removes it."
)
_CLOSE_CANCELS = (
    "The Agent MUST cancel any ongoing work as if `session/cancel` was called, stop the\n"
    "session's background work, and then free the resources associated with the session."
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
        "RFD-METADATA-NO-CLEAR", "RFD", "MUST NOT", _STREAM, _METADATA_ONLY,
    ),
    _C(
        "RFD-METADATA-NOT-RESET", "RFD", "MUST NOT", _STREAM, _METADATA_ONLY,
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
        "RFD-ERROR-OPTIONAL", "RFD", "MAY", _FAIL,
        "It is optional and nullable; omission and null are equivalent: the Agent "
        "supplied no error details.",
    ),
    _C(
        "RFD-ERROR-DETAILS", "RFD", "SHOULD", _FAIL,
        "The Agent SHOULD include it, and Clients may show message to the user.",
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
        "RFD-FAIL-CONTINUES-NO-STATE", "RFD", "MUST NOT", _FAIL,
        "Fails, and work continues (a retried request, a failed tool)\tA `notice` or "
        "a tool call with status `failed`; the state does not change",
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
        out_of_scope=(
            "It requires nothing a run can break: the model sends nothing when the "
            "agent restarts or a connection is lost, and each client learns of it "
            "from its own connection."
        ),
    ),
    _C(
        "RFD-CLIENT-UNKNOWN-STOP-ENDS", "RFD", "MUST", _FAIL,
        "A v2 Client that predates the error stop reason handles it like any unknown "
        "stop reason: foreground work has ended, and it shows a generic stopped state.",
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
    _C("RFD-NOTICE-NOT-FATAL", "RFD", "MUST NOT", _FAQ_NOTICE, _NOTICES),
    _C(
        "RFD-NOTICE-NO-STATE", "RFD", "MUST NOT", _FAQ_NOTICE, _NOTICES,
    ),
    # =================================================================== 2.4.0
    _C(
        "S240-CANCELREQ-STILL-RESPOND", "2.4.0", "MUST", "ProtocolLevel / CancelRequestNotification",
        "MUST still send a response for the original request.",
    ),
    _C(
        "S240-CANCELREQ-RESULT", "2.4.0", "MUST", "ProtocolLevel / CancelRequestNotification",
        "If it is cancelled, it is either the\n"
        "   method's defined cancellation result (for example an inserted `session/prompt`, or a\n"
        "   `cancelled` permission outcome) or an error with code `-32800` (Request Cancelled).",
    ),
    _C(
        "S240-CANCELREQ-IGNORE-ANSWERED", "2.4.0", "MUST", "ProtocolLevel / CancelRequestNotification",
        _CANCELREQ_IGNORE,
        out_of_scope=(
            "No planned property checks that a $/cancel_request for an "
            "already-answered prompt leaves its work running; only the "
            "second-response half of the sentence is checked."
        ),
    ),
    _C(
        "S240-CANCELREQ-NO-SECOND-RESPONSE", "2.4.0", "MUST NOT", "ProtocolLevel / CancelRequestNotification",
        _CANCELREQ_IGNORE,
    ),
    _C(
        "S240-PERM-AGENT-CANCELS", "2.4.0", "SHOULD", "AgentRequest / RequestPermissionRequest",
        "After `session/cancel`, the agent stops waiting for requests of the cancelled\n"
        "foreground work and SHOULD cancel them with `$/cancel_request`.",
    ),
    _C(
        "S240-PERM-CLIENT-ANSWERS-CANCELLED", "2.4.0", "MUST", "AgentRequest / RequestPermissionRequest",
        "The client\n"
        "answers a cancelled request with the `cancelled` outcome.",
    ),
    _C(
        "S240-REQID-NO-REUSE", "2.4.0", "MUST NOT", "RequestId",
        "A sender MUST NOT reuse an ID while\n"
        "a request with it is still awaiting a response.",
        out_of_scope=(
            "Wire-only rule of JSON-RPC framing: the model's participants number "
            "their requests with counters that never repeat, so no run of the model "
            "can break it; checked on the wire by `trace` (issue 10), rule "
            "`request_id_not_reused` of model/monitor.py."
        ),
    ),
    _C(
        "S240-ELICIT-CANCEL", "2.4.0", "SHOULD", "CreateElicitationRequest",
        "Agents SHOULD cancel pending elicitations no longer needed by cancelled work.",
        out_of_scope=(
            "The model has no elicitations; its permission requests stand for every "
            "request that blocks work."
        ),
    ),
    _C(
        "S240-NEW-NO-OVERWRITE", "2.4.0", "MUST NOT", "NewSessionResponse",
        "Clients MUST NOT overwrite\n"
        "an already-reported state when the response arrives.",
        out_of_scope=(
            "Wire-only rule: the model has one session, which exists before the run "
            "starts, so no `session/new` response ever arrives."
        ),
    ),
    _C(
        "S240-RESUME-STATE-BEFORE-RESPONSE", "2.4.0", "MUST", "ResumeSessionResponse",
        "The agent MUST send a current `state_update` after any requested history\n"
        "replay and before this response, even without replay.",
    ),
    _C(
        "S240-RESUME-RESPONSE-NOT-IDLE", "2.4.0", "MUST NOT", "ResumeSessionResponse",
        "The response alone does not imply `idle`.",
    ),
    _C(
        "S240-RESPONSE-ECHO-LIVE", "2.4.0", "MUST", "PromptResponse / messageId",
        "Agents must echo the message during the live session, but are\n"
        "not required to retain it.",
    ),
    _C(
        "S240-RESPONSE-REPLAY-KEEPS-ID", "2.4.0", "MUST", "PromptResponse / messageId",
        "If retained and replayed, the message keeps this identifier.",
    ),
    _C(
        "S240-MESSAGEID-PER-TYPE", "2.4.0", "MAY", "MessageId",
        "Each message type, such as user messages, agent messages, and agent thoughts,\n"
        "has its own ID space: messages of different types may share an ID and remain\n"
        "distinct messages.",
        out_of_scope=(
            "The model has user messages only, so per-type ID spaces and one ID space "
            "coincide."
        ),
    ),
    _C(
        "S240-CLIENT-ACCEPT-TOOL-UPDATES", "2.4.0", "SHOULD", "AgentNotification / UpdateSessionNotification",
        "Note: Clients SHOULD continue accepting tool call updates even after\n"
        "sending a `session/cancel` notification, as the agent may send final\n"
        "updates before reporting an idle `state_update` with the cancelled\n"
        "stop reason.",
        out_of_scope=(
            "The model's clients keep no tool call state, so no property can see a "
            "client drop a tool call update."
        ),
    ),
    _C(
        "S240-UPSERT-OMITTED-UNCHANGED", "2.4.0", "MUST", "UserMessage",
        "`content` has patch semantics:\n"
        "an omitted field leaves existing message content unchanged, `null` clears the\n"
        "value, and a concrete array replaces the previous value.",
    ),
    _C(
        "S240-UPSERT-CONTENT-REPLACES", "2.4.0", "MUST", "UserMessage",
        "When\n"
        "a `user_message` update includes `content`, that array replaces any content\n"
        "previously accumulated for the message, including content from earlier\n"
        "chunks.",
    ),
    _C(
        "S240-BACKGROUND-ANNOUNCE", "2.4.0", "MUST", "BackgroundWork",
        _BACKGROUND_ITEMS,
        out_of_scope=(
            "The model has no background work: every tool call belongs to the "
            "foreground work that started it; checked on the wire by `trace` (issue "
            "10), rule `background_items_announced` of model/monitor.py."
        ),
    ),
    _C(
        "S240-BACKGROUND-FINAL-BEFORE-REMOVAL", "2.4.0", "MUST", "BackgroundWork",
        _BACKGROUND_ITEMS,
        out_of_scope=(
            "The model has no background work: every tool call belongs to the "
            "foreground work that started it; checked on the wire by `trace` (issue "
            "10), rule `background_final_before_removal` of model/monitor.py."
        ),
    ),
    _C(
        "S240-BACKGROUND-EVERY-UPDATE", "2.4.0", "MUST", "RunningStateUpdate / background",
        "An Agent that reports background work MUST include it on every state\n"
        "update for the session.",
        out_of_scope=(
            "The model has no background work, so its state updates never carry a "
            "`background` list; checked on the wire by `trace` (issue 10), rule "
            "`background_on_every_state_update` of model/monitor.py."
        ),
    ),
    _C(
        "S240-ERROR-DETAILS-SHOULD", "2.4.0", "SHOULD", "ErrorStopReason / error",
        "Agents SHOULD include it.",
    ),
    _C(
        "S240-STOP-SHOULD-INCLUDE", "2.4.0", "SHOULD", "IdleStateUpdate",
        "Agents SHOULD include a `stopReason` when the idle transition ends foreground\n"
        "work.",
    ),
    _C(
        "S240-STOP-OMITTED-NOT-REPORTED", "2.4.0", "MUST", "IdleStateUpdate",
        "Receivers treat an omitted, `null`, or malformed `stopReason` as the agent not\n"
        "reporting one.",
    ),
    _C(
        "S240-STOP-REPEATED-NOT-COUNTED", "2.4.0", "MUST NOT", "IdleStateUpdate",
        "They MUST NOT be counted as new completions, cancellations, or additional usage.",
    ),
    _C(
        "S240-STOP-CANCELLED-ONLY-WHEN-CANCELLED", "2.4.0", "MUST", "IdleStateUpdate / cancelled",
        "Work the agent\n"
        "stops for its own reasons uses another reason, such as `error` for an\n"
        "internal timeout.",
    ),
    _C(
        "S240-STOP-CANCELLED-REPORT", "2.4.0", "MUST", "IdleStateUpdate / cancelled",
        "Agents MUST report this stop reason on an idle `state_update` when\n"
        "cancellation ends active foreground work, even if aborting causes\n"
        "exceptions.",
    ),
    _C(
        "S240-STOP-CANCELLED-CATCH", "2.4.0", "MUST", "IdleStateUpdate / cancelled",
        "Agents MUST catch these errors and report `cancelled`, not\n"
        "`error`.",
    ),
    _C(
        "S240-STOP-ERROR-PRE-INSERTION", "2.4.0", "MUST", "IdleStateUpdate / error",
        "A prompt failure before\n"
        "insertion also requires an error response to `session/prompt`.",
        out_of_scope=(
            "The model does not tie a failure of work that runs before insertion to "
            "the prompt it runs for."
        ),
    ),
    _C(
        "S240-STOP-CUSTOM-UNDERSCORE", "2.4.0", "MAY", "IdleStateUpdate / other",
        "Values beginning with `_` are reserved for implementation-specific\n"
        "extensions.",
    ),
    _C(
        "S240-STOP-UNKNOWN-RESERVED", "2.4.0", "MUST NOT", "IdleStateUpdate / other",
        "Unknown values that do not begin with `_` are reserved for\n"
        "future ACP variants.",
    ),
    _C(
        "S240-REQACTION-SHOULD-REPORT", "2.4.0", "SHOULD", "RequiresActionStateUpdate",
        "Agents SHOULD report this state when foreground work cannot progress without\n"
        "user action.",
        out_of_scope=(
            "Met by construction: the model agent sends `requires_action` with every "
            "permission request, and no property reads its absence."
        ),
    ),
    _C(
        "S240-REQACTION-THEN-RUNNING", "2.4.0", "MUST", "RequiresActionStateUpdate",
        "Once reported, agents MUST report\n"
        "`running` when progress resumes, or `idle` if the work ends without resuming.",
    ),
    _C(
        "S240-STATE-REPORT-RUNNING", "2.4.0", "MUST", "StateUpdate",
        _RUNNING_IDLE,
    ),
    _C(
        "S240-STATE-REPORT-IDLE", "2.4.0", "MUST", "StateUpdate",
        _RUNNING_IDLE,
    ),
    _C(
        "S240-STATE-RUNNING-BEFORE-INSERTION", "2.4.0", "MAY", "StateUpdate",
        "`running` may precede user-message insertion, for example during a foreground\n"
        "hook.",
    ),
    _C(
        "S240-STATE-REJECT-NOT-END", "2.4.0", "MUST NOT", "StateUpdate",
        "It is not acknowledgment of insertion, and rejecting a prompt does not\n"
        "itself end foreground work.",
    ),
    _C(
        "S240-STATE-BACKGROUND-NO-CHANGE", "2.4.0", "MUST NOT", "StateUpdate",
        "Those notifications, including a detached task's progress or\n"
        "completion, do not by themselves change this state.",
    ),
    _C(
        "S240-STATE-SHOULD-REQUIRES-ACTION", "2.4.0", "SHOULD", "StateUpdate",
        "The agent SHOULD report `requires_action` when the foreground workflow as a\n"
        "whole cannot progress without user action, including permissions or elicitations.",
        out_of_scope=(
            "Met by construction: the model agent sends `requires_action` with every "
            "permission request, and no property reads its absence."
        ),
    ),
    _C(
        "S240-STATE-RESUME-RUNNING", "2.4.0", "MUST", "StateUpdate",
        "Once reported, it MUST report `running` when progress resumes, or `idle` when\n"
        "work ends without resuming.",
    ),
    _C(
        "S240-STATE-IGNORE-LATE-RESPONSES", "2.4.0", "SHOULD", "StateUpdate",
        "Agents SHOULD ignore\n"
        "responses for work that has already ended rather than use them to resume it.",
    ),
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
        "S240-STATE-LOCAL-COMMANDS", "2.4.0", "MUST", "StateUpdate",
        "Local commands use the same lifecycle even without model work.",
        out_of_scope=(
            "The model agent runs a command as ordinary work (`running`, then "
            "`idle`), and no property tells command work from prompt work."
        ),
    ),
    _C(
        "S240-STATE-STANDARD-STATES", "2.4.0", "MUST", "StateUpdate / other",
        "Unless the Client advertised support for this state, Agents MUST still\n"
        "report the standard states.",
        out_of_scope=(
            "The model agent reports only the standard states; a custom state appears "
            "only in the FAQ variant `failed-state`."
        ),
    ),
    _C(
        "S240-STATE-CLIENT-UNKNOWN-BUSY", "2.4.0", "MUST NOT", "StateUpdate / other",
        "Clients MUST NOT treat an unrecognized state as `idle` or present the\n"
        "previous state as confirmed, and show a generic busy state until a known\n"
        "state arrives.",
        out_of_scope=(
            "The model agent reports only the standard states; a custom state appears "
            "only in the FAQ variant `failed-state`."
        ),
    ),
    _C(
        "S240-NOTICE-NOT-RELIED-ON", "2.4.0", "MUST NOT", "Notice",
        "Agents must not rely on\n"
        "a notice being received, displayed, or seen by the user.",
    ),
    _C(
        "S240-CLOSE-CANCELS-WORK", "2.4.0", "MUST", "ClientRequest / CloseSessionRequest",
        _CLOSE_CANCELS,
        out_of_scope=(
            "The model has no `session/close`."
        ),
    ),
    _C(
        "S240-CLOSE-STOPS-BACKGROUND", "2.4.0", "MUST", "ClientRequest / CloseSessionRequest",
        _CLOSE_CANCELS,
        out_of_scope=(
            "The model has no background work and no `session/close`."
        ),
    ),
    _C(
        "S240-PROMPT-ACCEPTANCE", "2.4.0", "MUST NOT", "ClientRequest / PromptRequest",
        "Acceptance means adding a logical user message with an ID and a position\n"
        "relative to other messages in the ACP conversation, not receipt or queueing.",
    ),
    _C(
        "S240-PROMPT-RETURN-ID", "2.4.0", "MUST", "ClientRequest / PromptRequest",
        "The Agent MUST return the inserted message's ID without waiting for\n"
        "processing to finish.",
    ),
    _C(
        "S240-PROMPT-NEITHER-PRECEDES", "2.4.0", "MUST NOT", "ClientRequest / PromptRequest",
        "This notification may arrive before or after the response, but neither may\n"
        "precede insertion.",
    ),
    _C(
        "S240-PROMPT-NO-ERROR-AFTER-INSERT", "2.4.0", "MUST NOT", "ClientRequest / PromptRequest",
        "Once it is\n"
        "inserted, the Agent MUST NOT answer with an error, even if the work fails\n"
        "before the response is sent.",
    ),
    _C(
        "S240-PROMPT-FAILURE-ERROR-STOP", "2.4.0", "MUST", "ClientRequest / PromptRequest",
        "It ends that work with the `error` stop reason.",
    ),
    _C(
        "S240-PROMPT-REJECTED-NO-ECHO", "2.4.0", "MUST NOT", "ClientRequest / PromptRequest",
        "A rejected submission produces no user-message updates.",
    ),
    _C(
        "S240-PROMPT-REJECT-NOT-IDLE", "2.4.0", "MUST NOT", "ClientRequest / PromptRequest",
        "Foreground state\n"
        "follows its normal lifecycle independently of the request outcome:\n"
        "`running` may precede insertion, and rejection alone does not imply `idle`.",
    ),
    _C(
        "S240-CLOSE-SILENT-AFTER-RESPONSE", "2.4.0", "MUST NOT", "CloseSessionRequest",
        "After the close response, the Agent\n"
        "sends no other messages for the session on that connection.",
        out_of_scope=(
            "The model has no `session/close`; checked on the wire by `trace` (issue "
            "10), rule `nothing_after_close` of model/monitor.py."
        ),
    ),
    _C(
        "S240-CLOSE-MISSING-SUCCEEDS", "2.4.0", "SHOULD", "CloseSessionRequest",
        "Closing a session that does not exist or is not active SHOULD succeed, and Clients SHOULD\n"
        "treat a `-32002` response as a successful close.",
        out_of_scope=(
            "Wire-only rule: the model has one session, which exists for the whole "
            "run."
        ),
    ),
    _C(
        "S240-CLOSE-IDLE-BEFORE-RESPONSE", "2.4.0", "MUST", "CloseSessionRequest",
        "When closing cancels active foreground work, the Agent MUST send the final\n"
        'updates for that work and the idle `state_update` with `stopReason: "cancelled"`\n'
        "before responding successfully to `session/close`.",
        out_of_scope=(
            "The model has no `session/close`; checked on the wire by `trace` (issue "
            "10), rule `close_ends_work_first` of model/monitor.py."
        ),
    ),
    _C(
        "S240-CLOSE-CANCELS-HELD", "2.4.0", "MUST", "CloseSessionRequest",
        "Closing also cancels pending `session/prompt` requests whose messages have not\n"
        "been inserted, including held prompts.",
        out_of_scope=(
            "The model has no `session/close`."
        ),
    ),
    _C(
        "S240-CLOSE-HELD-ANSWERED-32800", "2.4.0", "MUST", "CloseSessionRequest",
        "If closing prevents a prompt's user message from being inserted, the\n"
        "Agent MUST answer that request with `-32800` (Request Cancelled).",
        out_of_scope=(
            "The model has no `session/close`; checked on the wire by `trace` (issue "
            "10), rule `close_answers_prompts_cancelled` of model/monitor.py."
        ),
    ),
    _C(
        "S240-CLOSE-INSERTED-SUCCEEDS", "2.4.0", "MUST", "CloseSessionRequest",
        "If the message\n"
        "has already been inserted, the Agent MUST respond successfully with its\n"
        "`messageId`.",
        out_of_scope=(
            "The model has no `session/close`."
        ),
    ),
    _C(
        "S240-PERM-CANCELLED-NOT-PROCEED", "2.4.0", "MUST NOT", "RequestPermissionOutcome / cancelled",
        "Agents MUST NOT proceed with the operation.",
        out_of_scope=(
            "The model's permission requests carry no operation, so proceeding with "
            "one cannot be told from going on with the rest of the work; checked on "
            "the wire by `trace` (issue 10), rule `not_approved_not_proceeded` of "
            "model/monitor.py."
        ),
    ),
    _C(
        "S240-PERM-CLIENT-MAY-CANCEL", "2.4.0", "MAY", "RequestPermissionOutcome / cancelled",
        "After sending `session/cancel`, the client MAY also send it\n"
        "without waiting for `$/cancel_request`, for a request it knows belongs to the\n"
        "cancelled foreground work.",
        out_of_scope=(
            "A permission the model's clients do not use: they answer cancelled only "
            "once the agent has cancelled the request."
        ),
    ),
    _C(
        "S240-CANCEL-SCOPE", "2.4.0", "MUST", "ClientNotification / CancelSessionNotification",
        "Cancels a session's foreground work and its prompts not yet inserted.",
    ),
    _C(
        "S240-CANCEL-NOT-BACKGROUND", "2.4.0", "MUST NOT", "ClientNotification / CancelSessionNotification",
        "Work in the latest `background` list is not covered and keeps running.",
        out_of_scope=(
            "The model has no background work."
        ),
    ),
    _C(
        "S240-CANCEL-STOP-SOON", "2.4.0", "SHOULD", "ClientNotification / CancelSessionNotification",
        "Upon receiving this notification, the Agent SHOULD stop all language model\n"
        "requests and all tool call invocations of the cancelled foreground work as soon\n"
        "as possible.",
        out_of_scope=(
            "The phrase as soon as possible sets no bound a finite model can check: "
            "the model agent ends cancelled work at any later step."
        ),
    ),
    _C(
        "S240-CANCEL-PERM-STOP-WAITING", "2.4.0", "MUST", "ClientNotification / CancelSessionNotification",
        "The Agent MUST stop waiting for pending `session/request_permission` requests of\n"
        "the cancelled work and treat them as not approved.",
    ),
    _C(
        "S240-CANCEL-PERM-CANCEL-REQUEST", "2.4.0", "SHOULD", "ClientNotification / CancelSessionNotification",
        "It SHOULD cancel each of them\n"
        "with `$/cancel_request`.",
    ),
    _C(
        "S240-CANCEL-IDLE-CANCELLED", "2.4.0", "MUST", "ClientNotification / CancelSessionNotification",
        "After all ongoing operations have been successfully aborted and pending\n"
        "updates have been sent, the Agent MUST send an idle `state_update` session\n"
        "update with the `cancelled` stop reason if cancellation ended active\n"
        "foreground work.",
    ),
    _C(
        "S240-CANCEL-NO-WORK-NO-UPDATE", "2.4.0", "NOT REQUIRED", "ClientNotification / CancelSessionNotification",
        "No additional completion update is required if no\n"
        "foreground work was active.",
        out_of_scope=(
            "It requires nothing: the model agent sends nothing for a "
            "`session/cancel` that finds no work."
        ),
    ),
    _C(
        "S240-CANCEL-IGNORE-LATE-ANSWERS", "2.4.0", "SHOULD", "ClientNotification / CancelSessionNotification",
        "After cancellation completes, the Agent SHOULD ignore late answers rather\n"
        "than use them to resume the cancelled work.",
    ),
    _C(
        "S240-CANCEL-ABORT-ERRORS", "2.4.0", "MUST", "ClientNotification / CancelSessionNotification",
        "Agents MUST catch errors caused by aborting cancelled work and report the\n"
        "`cancelled` stop reason, not `error`.",
    ),
    _C(
        "S240-CANCEL-UPDATES-MAY", "2.4.0", "MAY", "ClientNotification / CancelSessionNotification",
        _CANCEL_UPDATES,
    ),
    _C(
        "S240-CANCEL-UPDATES-BEFORE-IDLE", "2.4.0", "MUST", "ClientNotification / CancelSessionNotification",
        _CANCEL_UPDATES,
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
    "RFD-METADATA-NO-CLEAR",
    "RFD-METADATA-NOT-RESET",
    "RFD-CLIENT-NO-APPEND-OPTIMISTIC",
    "RFD-FAIL-ERROR-IDLE",
    "RFD-ERROR-MEANING",
    "RFD-FAIL-ANY-WORK",
    "RFD-ERROR-OPTIONAL",
    "RFD-ERROR-FIELD-ONLY",
    "RFD-FAIL-STILL-SUCCEEDS",
    "RFD-ERROR-MEANS-NOT-INSERTED",
    "RFD-CANCELREQ-ONLY-BEFORE-INSERTION",
    "RFD-CANCELREQ-AFTER-INSERTION-SUCCEEDS",
    "RFD-IDLE-AFTER-ALL-UPDATES",
    "RFD-FAIL-NO-UNDO",
    "RFD-RETRY-NEW-MESSAGE",
    "RFD-ERROR-ONLY-ENDING-FAILURES",
    "RFD-FAIL-CONTINUES-NO-STATE",
    "RFD-CANCEL-EVEN-IF-ABORT-FAILS",
    "RFD-BACKGROUND-FAILURE-NO-STOP",
    "RFD-PROCESS-EXIT-UNREPORTED",
    "RFD-CLIENT-UNKNOWN-STOP-ENDS",
    "RFD-OPEN-CANCEL-RACES",
    "RFD-OPEN-RESUME-STATE",
    "RFD-OPEN-RETRIES-OUTSIDE",
    "RFD-STATE-SESSION-SCOPED",
    "RFD-RETRY-DISTINCT",
    "RFD-COMMAND-REPLAY-SAME-ID",
    "RFD-COMMAND-REPLAY-NO-EXEC",
    "RFD-NOTICE-NOT-FATAL",
    "RFD-NOTICE-NO-STATE",
    "S240-CANCELREQ-RESULT",
    "S240-PERM-CLIENT-ANSWERS-CANCELLED",
    "S240-RESUME-RESPONSE-NOT-IDLE",
    "S240-RESPONSE-ECHO-LIVE",
    "S240-RESPONSE-REPLAY-KEEPS-ID",
    "S240-MESSAGEID-PER-TYPE",
    "S240-UPSERT-OMITTED-UNCHANGED",
    "S240-UPSERT-CONTENT-REPLACES",
    "S240-STOP-OMITTED-NOT-REPORTED",
    "S240-STOP-CANCELLED-ONLY-WHEN-CANCELLED",
    "S240-STOP-ERROR-PRE-INSERTION",
    "S240-STOP-CUSTOM-UNDERSCORE",
    "S240-STOP-UNKNOWN-RESERVED",
    "S240-STATE-RUNNING-BEFORE-INSERTION",
    "S240-STATE-REJECT-NOT-END",
    "S240-STATE-BACKGROUND-NO-CHANGE",
    "S240-STATE-NEW-IDLE",
    "S240-STATE-LOCAL-COMMANDS",
    "S240-NOTICE-NOT-RELIED-ON",
    "S240-PROMPT-ACCEPTANCE",
    "S240-PROMPT-NEITHER-PRECEDES",
    "S240-PROMPT-FAILURE-ERROR-STOP",
    "S240-PROMPT-REJECTED-NO-ECHO",
    "S240-PROMPT-REJECT-NOT-IDLE",
    "S240-CLOSE-SILENT-AFTER-RESPONSE",
    "S240-CLOSE-CANCELS-HELD",
    "S240-CANCEL-SCOPE",
    "S240-CANCEL-NOT-BACKGROUND",
    "S240-CANCEL-NO-WORK-NO-UPDATE",
})


# =============================================================================
# Wire-only clauses checked by the transcript monitor (model/monitor.py).
# Added for `acp-lifecycle trace` (issue 10): 2.4.0 sentences about requests,
# sessions and methods the model does not have. Verbatim, like every clause.
# =============================================================================

_MONITOR = "Wire-only rule: checked on transcripts by model/monitor.py (rule `{}`)"

_WIRE: tuple[Clause, ...] = (
    _C(
        "S240-REQID-NOT-NULL", "2.4.0", "MUST NOT", "RequestId",
        "Unlike base JSON-RPC, it MUST NOT be `null`.",
        out_of_scope=_MONITOR.format("request_id_not_null") + "; the model's requests never carry a null id.",
    ),
    _C(
        "S240-REQID-SAME-VALUE", "2.4.0", "MUST", "RequestId",
        "The receiver MUST reply with the same value in the response.",
        out_of_scope=_MONITOR.format("response_matches_a_request") + "; the model answers by its own counters.",
    ),
    _C(
        "S240-NEW-UPDATES-EITHER-SIDE", "2.4.0", "MAY", "NewSessionResponse",
        "Updates may arrive before or after this response.",
        out_of_scope=_MONITOR.format("updates_only_for_opened_sessions") + "; the model has no `session/new`.",
    ),
    _C(
        "S240-PROMPT-NOT-EMPTY", "2.4.0", "MUST NOT", "PromptRequest / prompt",
        "Clients MUST NOT send an empty array.",
        out_of_scope=_MONITOR.format("prompt_not_empty") + "; model prompts always carry content.",
    ),
    _C(
        "S240-PERM-UNKNOWN-OPTION", "2.4.0", "MUST", "RequestPermissionOutcome / selected",
        "If `optionId` doesn't match an offered option, the agent MUST treat the request as not\napproved.",
        out_of_scope=_MONITOR.format("not_approved_not_proceeded") + "; model clients pick an offered option.",
    ),
    _C(
        "S240-RESUME-CURSOR-REJECT", "2.4.0", "MUST", "ResumeSessionRequest / replayFrom",
        "Agents MUST reject unsupported cursor types or malformed cursor values\nwith `-32602` (Invalid params), "
        "rather than substituting another cursor\nor resuming without replay.",
        out_of_scope=_MONITOR.format("unsupported_replay_cursor_rejected") + "; model clients send no other cursor.",
    ),
    _C(
        "S240-TOOLCANCEL-ADVERTISED", "2.4.0", "MUST NOT", "CancelToolCallRequest",
        "Clients MUST NOT send it unless the tool call currently advertises `capabilities.cancel`.",
        out_of_scope=_MONITOR.format("tool_cancel_only_if_advertised") + "; the model has no `tool_call/cancel`.",
    ),
    _C(
        "S240-TOOLCANCEL-CONFIRM", "2.4.0", "MUST", "CancelToolCallRequest",
        "The Agent confirms it with a `tool_call_update` to a final\nstatus: normally `cancelled`, or `completed` "
        "or `failed` if the work finished first.",
        out_of_scope=_MONITOR.format("tool_cancel_confirmed") + "; the model has no `tool_call/cancel`.",
    ),
    _C(
        "S240-TOOLCANCEL-REJECT", "2.4.0", "MUST", "CancelToolCallRequest",
        "The Agent responds with `-32602` if the tool call is unknown, already final, or not\ncancellable.",
        out_of_scope=_MONITOR.format("tool_cancel_rejects_final") + "; the model has no `tool_call/cancel`.",
    ),
)
for _c in _WIRE:
    assert _c.id not in CLAUSES, f"duplicate clause id {_c.id}"
    CLAUSES[_c.id] = _c
IMPLIED_LEVEL = IMPLIED_LEVEL | {"S240-NEW-UPDATES-EITHER-SIDE", "S240-TOOLCANCEL-CONFIRM", "S240-TOOLCANCEL-REJECT"}


# =============================================================================
# Clauses no rule of the transcript monitor judges, and why: a transcript of the agent's
# connections cannot show them broken. Every other clause is cited by a monitor rule
# (tests/test_transcript.py checks that each clause has exactly one of the two).
# =============================================================================

_INSERTION = "not on the wire: insertion is internal to the agent; a success response before it looks like one after it"
_TIE = ("not decidable on the wire: a prompt's error response cannot be tied to an inserted message (or to none) "
        "without matching content, which the RFD forbids")
_CLIENT = "not on the wire: how a client reads, shows or reconciles what it receives changes no message"
_PERMISSION = "nothing on the wire can break it: a permission, or something not required"
_FAILURE = "not on the wire: whether work failed, or whether a failure is fatal, is internal to the agent"
_CAUSE = ("not decidable on the wire: what caused a state change (a rejection, a background event, "
          "other work) is internal to the agent")
_BLOCKED = ("not decidable on the wire: whether the foreground workflow as a whole can progress "
            "(parallel tool calls, model calls in flight) is internal to the agent")
_RACE = ("not decidable on the wire: whether a request was cancelled or answered on its own "
         "(a failure, an answer crossing the $/cancel_request in flight) is not in the messages")
_OPEN = "not a rule: an open question the RFD leaves to follow-ups"
_SHAPE = "holds by the message format: no message can carry it broken"

#: clause id -> why no monitor rule judges it
WIRE_REASONS: dict[str, str] = {
    "RFD-INSERT-NOT-ACCEPTANCE": _INSERTION,
    "RFD-INSERT-NO-EARLY-SUCCESS": _INSERTION,
    "RFD-INSERT-ADVANCE-ID": _INSERTION,
    "S240-PROMPT-ACCEPTANCE": _INSERTION,
    "S240-PROMPT-NEITHER-PRECEDES": _INSERTION,
    "RFD-INSERT-REJECT-ERROR": ("not on the wire: whether the agent rejected a prompt is known only from its response "
                                "(a success is judged by success_carries_message_id)"),
    "RFD-FAIL-NO-ERROR-RESPONSE": _TIE,
    "RFD-FAIL-STILL-SUCCEEDS": _TIE,
    "RFD-ERROR-MEANS-NOT-INSERTED": _TIE,
    "RFD-CANCELREQ-ONLY-BEFORE-INSERTION": _TIE,
    "RFD-CANCELREQ-AFTER-INSERTION-SUCCEEDS": _TIE,
    "S240-PROMPT-NO-ERROR-AFTER-INSERT": _TIE,
    "S240-PROMPT-REJECTED-NO-ECHO": _TIE,
    "S240-CLOSE-INSERTED-SUCCEEDS": _TIE,
    "S240-STOP-ERROR-PRE-INSERTION": _TIE,
    "RFD-CLIENT-TOLERATE-ORDER": _CLIENT,
    "RFD-CLIENT-RECONCILE": _CLIENT,
    "RFD-CLIENT-NO-INFER-SENDER": _CLIENT,
    "RFD-CLIENT-NO-ASSUME-RETAINED": _CLIENT,
    "RFD-LOST-NO-GUESS": _CLIENT,
    "RFD-RETRY-NOT-ASSUMED-SAFE": _CLIENT,
    "RFD-METADATA-NO-CLEAR": _CLIENT,
    "RFD-CLIENT-NO-APPEND-OPTIMISTIC": _CLIENT,
    "RFD-CLIENT-UNKNOWN-STOP-ENDS": _CLIENT,
    "S240-NEW-NO-OVERWRITE": _CLIENT,
    "S240-RESUME-RESPONSE-NOT-IDLE": _CLIENT,
    "S240-CLIENT-ACCEPT-TOOL-UPDATES": _CLIENT,
    "S240-UPSERT-OMITTED-UNCHANGED": _CLIENT,
    "S240-UPSERT-CONTENT-REPLACES": _CLIENT,
    "S240-STOP-OMITTED-NOT-REPORTED": _CLIENT,
    "S240-STATE-CLIENT-UNKNOWN-BUSY": _CLIENT,
    "RFD-QUEUE-UNSPECIFIED": _PERMISSION,
    "RFD-RETAIN-NOT-REQUIRED": _PERMISSION,
    "RFD-LOST-RESPONSE-AMBIGUOUS": _PERMISSION,
    "RFD-ERROR-OPTIONAL": _PERMISSION,
    "RFD-RETRY-NEW-MESSAGE": _PERMISSION,
    "RFD-PROCESS-EXIT-UNREPORTED": _PERMISSION,
    "RFD-RETRY-DISTINCT": _PERMISSION,
    "S240-MESSAGEID-PER-TYPE": _PERMISSION,
    "S240-STATE-RUNNING-BEFORE-INSERTION": _PERMISSION,
    "S240-PERM-CLIENT-MAY-CANCEL": _PERMISSION,
    "S240-CANCEL-NO-WORK-NO-UPDATE": _PERMISSION,
    "S240-CANCEL-UPDATES-MAY": _PERMISSION + " (its MUST half is S240-CANCEL-UPDATES-BEFORE-IDLE)",
    "RFD-FAIL-ERROR-IDLE": _FAILURE,
    "RFD-FAIL-ANY-WORK": _FAILURE,
    "RFD-FAIL-CONTINUES-NO-STATE": _FAILURE,
    "RFD-NOTICE-NOT-FATAL": _FAILURE,
    "S240-PROMPT-FAILURE-ERROR-STOP": _FAILURE,
    "RFD-FAIL-NO-UNDO": "not on the wire: undoing is internal, and nothing requires a message to be retained",
    "S240-STATE-REJECT-NOT-END": _CAUSE,
    "S240-PROMPT-REJECT-NOT-IDLE": _CAUSE,
    "S240-STATE-BACKGROUND-NO-CHANGE": _CAUSE,
    "S240-REQACTION-SHOULD-REPORT": _BLOCKED,
    "S240-STATE-SHOULD-REQUIRES-ACTION": _BLOCKED,
    "S240-CANCELREQ-RESULT": _RACE,
    "S240-PERM-CLIENT-ANSWERS-CANCELLED": _RACE,
    "RFD-OPEN-CANCEL-RACES": _OPEN,
    "RFD-OPEN-RETRIES-OUTSIDE": _OPEN,
    "RFD-STATE-SESSION-SCOPED": _SHAPE + " (state_update has no turn or message ID)",
    "RFD-NOTICE-NO-STATE": _SHAPE + " (a notice has no state)",
    "RFD-ID-IMPORTED": "not on the wire: nothing in a message tells an imported message from another",
    "RFD-COMMAND-REPLAY-NO-EXEC": "not on the wire: executing a command is internal to the agent",
    "S240-NOTICE-NOT-RELIED-ON": "not on the wire: what the agent relies on is internal to it",
    "S240-CANCEL-STOP-SOON": "not on the wire: how soon work stops is internal to the agent",
    "S240-ELICIT-CANCEL": ("not decidable on the wire: whether a pending elicitation belongs to the cancelled work "
                           "(its scope alone does not establish that dependency)"),
    "S240-CANCEL-NOT-BACKGROUND": "not decidable on the wire: a background item may end on its own after a session/cancel",
    "S240-CLOSE-MISSING-SUCCEEDS": ("not decidable on the wire: whether the session exists or is active on the agent "
                                    "(other connections, storage) is not in the messages"),
}
for _cid, _why in WIRE_REASONS.items():
    CLAUSES[_cid] = replace(CLAUSES[_cid], wire=_why)


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
