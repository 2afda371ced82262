"""Why a property is judged on the model's own state rather than, as a judge, on messages.

A rule about what a participant sent or received is a judge (``model/judges/``), one
definition for ``check`` and ``trace``. The properties below read the model's state instead,
each for the reason given: what they judge happens inside a participant. ``docs/clauses.md`` shows the
reason beside each property; ``tests/test_judges.py`` checks that every property that is not
a judge (nor a ``sometimes`` witness) has one.
"""

from __future__ import annotations

__all__ = ["WHY_NOT_A_JUDGE"]

_INSERTION = "insertion happens inside the agent: no message says when a message joined the conversation"
_CAUSE = ("what ended or changed the foreground work (a failure, a session/cancel, new work) happens inside the "
          "agent: the messages show the state, not its cause")
_CLIENT = "what a client shows, associates or believes is its own state: no message carries it"
_OPEN = "a limitation or an open question of the RFD about what a participant can know, judged on both sides' states"
_WORK = "whether work is running, blocked or ended is the agent's own state: the messages report it, and may not"

#: property id -> why it reads the model's state
WHY_NOT_A_JUDGE: dict[str, str] = {
    "success_only_after_insertion": _INSERTION,
    "rejected_prompt_never_inserted": _INSERTION,
    "inserted_prompt_never_rejected": _INSERTION,
    "answered_before_its_work_ends": _INSERTION + "; nor when the work that took it ended",
    "cancelled_prompt_never_inserted": _INSERTION,
    "resumed_client_sees_current_state": _CLIENT + " (the snapshot on the wire is the judge resume_snapshot_before_response)",
    "echo_names_an_inserted_message": _INSERTION,
    "rejected_submission_never_echoed": "an ID assigned in advance to a rejected prompt is known only inside the agent",
    "failed_work_ends_with_error_idle": _CAUSE,
    "ended_work_reported_idle": _WORK,
    "failure_marks_unfinished_tools_failed": "which tool calls the failure left unfinished is the agent's own "
                                             "knowledge: on the wire a call may have completed just before",
    "error_idle_only_for_failure": _CAUSE,
    "state_changes_only_with_work": _CAUSE,
    "idle_ending_work_has_stop_reason": _WORK,
    "error_idle_carries_details": "whether the failure had an error object is known only inside the agent",
    "cancelled_work_ends": _WORK,
    "cancelled_work_never_resumes": _CAUSE,
    "blocked_work_reported_requires_action": "whether work is blocked on a permission is the agent's own state",
    "late_answer_ignored": "whether the agent still waits for an answer is its own state",
    "cancelled_permission_requests_cancelled": "which permission request the cancelled work waited for is the agent's own state",
    "single_canonical_copy": _CLIENT,
    "association_points_at_own_submission": _CLIENT,
    "client_content_matches_agent": _CLIENT,
    "client_completion_belief_is_true": _CLIENT,
    "client_sees_current_state": _CLIENT,
    "cancelled_permission_answered_cancelled": "that the client knew the request was cancelled when it answered is its own state",
    "replay_preserves_ids": "which messages the agent retained is its own state",
    "replayed_command_not_reexecuted": "whether a command ran again happens inside the agent",
    "lost_response_recoverable": _OPEN,
    "retry_does_not_duplicate": _OPEN,
    "session_cancel_stops_only_work_it_saw": _OPEN,
    "session_cancel_stops_inserted_waiting_prompt": _OPEN,
}
