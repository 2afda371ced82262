"""The clauses of the RFD (v2 Prompt Lifecycle), in the order of its text; verbatim (the rules they follow: ``_clause.py``)."""

from __future__ import annotations

from ._clause import Clause

__all__ = ["RFD"]

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

RFD: tuple[Clause, ...] = (
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
            "It constrains what a client expects of a replay, and no "
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
)
