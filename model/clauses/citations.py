"""Which clauses each property of the model cites (``CITATIONS``).

A judge (``model/judges/``: a rule written once for check and trace) carries its own
clauses; they are added here under its id, so that this table lists every property. A
property that exposes a *known limitation* of the RFD still cites its clauses: the model
checks them by showing the counterexample.
"""

from __future__ import annotations

from ..judges import JUDGES

__all__ = ["CITATIONS"]

#: The properties of the model (snake_case names) and the clause ids each cites;
#: ``tests/test_clauses.py`` checks that it names real clauses and agrees with ``out_of_scope``.
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
    # --- message IDs and echoes -----------------------------------------
    "echo_names_an_inserted_message": (
        "RFD-ID-ECHO-SAME",
        "RFD-ECHO-EVERY",
        "RFD-ID-SAME-EVERYWHERE",
        "S240-PROMPT-NEITHER-PRECEDES",
    ),
    "rejected_submission_never_echoed": ("S240-PROMPT-REJECTED-NO-ECHO",),
    # --- ending foreground work -----------------------------------------
    "failed_work_ends_with_error_idle": (
        "RFD-FAIL-ERROR-IDLE",
        "RFD-ERROR-MEANING",
        "RFD-FAIL-ANY-WORK",
        "S240-PROMPT-FAILURE-ERROR-STOP",
        "RFD-NOTICE-NOT-FATAL",
        "S240-NOTICE-NOT-RELIED-ON",
    ),
    "failure_marks_unfinished_tools_failed": (
        "RFD-FAIL-TOOLS-TERMINAL",
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
    "replayed_command_not_reexecuted": ("RFD-COMMAND-REPLAY-NO-EXEC",),
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
    "session_cancel_stops_inserted_waiting_prompt": (
        "RFD-CANCELREQ-AFTER-INSERTION-SUCCEEDS",
        "RFD-OPEN-CANCEL-RACES",
        "S240-CANCEL-SCOPE",
    ),
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
    "cancelled_work_ends": (
        "S240-CANCEL-IDLE-CANCELLED",
        "S240-CANCEL-PERM-STOP-WAITING",
    ),
    "cancelled_work_never_resumes": (
        "S240-CANCEL-PERM-STOP-WAITING",
    ),
    "blocked_work_reported_requires_action": (
        "S240-STATE-SHOULD-REQUIRES-ACTION",
        "S240-REQACTION-SHOULD-REPORT",
    ),
    "late_answer_ignored": (
        "S240-STATE-IGNORE-LATE-RESPONSES",
        "S240-CANCEL-IGNORE-LATE-ANSWERS",
    ),
    "cancelled_permission_requests_cancelled": (
        "S240-CANCEL-PERM-CANCEL-REQUEST",
        "S240-PERM-AGENT-CANCELS",
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
CITATIONS.update({j.id: j.clauses for j in JUDGES.values()})
