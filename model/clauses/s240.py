"""The clauses of the 2.4.0 schema text, in the order it occurs in ``schema.json``, and the
wire-only clauses of the transcript monitor; verbatim (the rules they follow: ``_clause.py``)."""

from __future__ import annotations

from ._clause import Clause

__all__ = ["S240", "WIRE_ONLY", "WIRE_ONLY_IMPLIED"]

_C = Clause

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

S240: tuple[Clause, ...] = (
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
            "No property checks that a $/cancel_request for an "
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
            "`request_id_not_reused` of model/monitor/."
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
            "10), rule `background_items_announced` of model/monitor/."
        ),
    ),
    _C(
        "S240-BACKGROUND-FINAL-BEFORE-REMOVAL", "2.4.0", "MUST", "BackgroundWork",
        _BACKGROUND_ITEMS,
        out_of_scope=(
            "The model has no background work: every tool call belongs to the "
            "foreground work that started it; checked on the wire by `trace` (issue "
            "10), rule `background_final_before_removal` of model/monitor/."
        ),
    ),
    _C(
        "S240-BACKGROUND-EVERY-UPDATE", "2.4.0", "MUST", "RunningStateUpdate / background",
        "An Agent that reports background work MUST include it on every state\n"
        "update for the session.",
        out_of_scope=(
            "The model has no background work, so its state updates never carry a "
            "`background` list; checked on the wire by `trace` (issue 10), rule "
            "`background_on_every_state_update` of model/monitor/."
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
        "S240-PERM-CANCELLED-NOT-PROCEED", "2.4.0", "MUST NOT", "RequestPermissionOutcome / cancelled",
        "Agents MUST NOT proceed with the operation.",
        out_of_scope=(
            "The model's permission requests carry no operation, so proceeding with "
            "one cannot be told from going on with the rest of the work; checked on "
            "the wire by `trace` (issue 10), rule `not_approved_not_proceeded` of "
            "model/monitor/."
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


# =============================================================================
# Wire-only clauses checked by the transcript monitor (model/monitor/).
# Added for `acp-lifecycle trace` (issue 10): 2.4.0 sentences about requests,
# sessions and methods the model does not have. Verbatim, like every clause.
# =============================================================================

_MONITOR = "Wire-only rule: checked on transcripts by model/monitor/ (rule `{}`)"

WIRE_ONLY: tuple[Clause, ...] = (
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
WIRE_ONLY_IMPLIED = frozenset({"S240-NEW-UPDATES-EITHER-SIDE", "S240-TOOLCANCEL-CONFIRM", "S240-TOOLCANCEL-REJECT"})
