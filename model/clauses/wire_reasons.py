"""Why no rule of the transcript monitor judges a clause (``WIRE_REASONS``)."""

from __future__ import annotations

__all__ = ["WIRE_REASONS"]

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
    "S240-STATE-REJECT-NOT-END": _CAUSE,
    "S240-PROMPT-REJECT-NOT-IDLE": _CAUSE,
    "S240-STATE-BACKGROUND-NO-CHANGE": _CAUSE,
    "S240-REQACTION-SHOULD-REPORT": _BLOCKED,
    "S240-STATE-SHOULD-REQUIRES-ACTION": _BLOCKED,
    "S240-CANCELREQ-RESULT": _RACE,
    # the second-response half is S240-CANCELREQ-NO-SECOND-RESPONSE (one_response_per_request)
    "S240-CANCELREQ-IGNORE-ANSWERED": ("not decidable on the wire: whether a $/cancel_request for an answered "
                                       "request changed the work it started is internal to the agent"),
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
}
