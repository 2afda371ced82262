"""Seeded bugs: deliberately wrong agents and clients the checker must catch.

Each bug is a small change to ``Rules`` (never a fork of the model), the
property it breaks, the smallest configuration member that exhibits it, and,
where a real implementation shipped it, the source (see docs/bugs.md). A
checker that has never been seen failing is not trusted: ``tests/test_bugs.py``
checks that each one is caught with the expected property.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import RFD_RULES, Rules

__all__ = ["Bug", "BUGS", "get_bug"]


@dataclass(frozen=True, slots=True)
class Bug:
    name: str
    summary: str
    changes: tuple[tuple[str, object], ...]
    breaks: str  # the property id expected to catch it
    member: str  # the smallest configuration member that exhibits it
    source: str = ""
    #: properties the fault also breaks, through a participant it misleads (a client that
    #: takes a reused ID for its own message): a random run may reach one of them first
    also: tuple[str, ...] = ()

    @property
    def catches(self) -> tuple[str, ...]:
        """Every property expected to catch the fault, ``breaks`` first."""
        return (self.breaks,) + self.also

    @property
    def rules(self) -> Rules:
        """The bug on the RFD's rules."""
        return self.on(RFD_RULES)

    def on(self, base: Rules) -> Rules:
        """The bug on a rule set (``config.RULE_SETS``)."""
        return base.with_(name=f"bug:{self.name}", **dict(self.changes))


def _bug(name, summary, breaks, member, source="", also=(), **changes) -> Bug:
    return Bug(name, summary, tuple(sorted(changes.items())), breaks, member, source, also)


BUGS: dict[str, Bug] = {
    b.name: b
    for b in (
        _bug("answer-at-receipt", "agent answers session/prompt when it receives it, before insertion",
             "success_only_after_insertion", "tiny", respond_at="receipt"),
        _bug("answer-at-reserve", "agent answers when it reserves an ID, before insertion",
             "success_only_after_insertion", "tiny", respond_at="reserve"),
        _bug("error-after-insertion", "agent answers an error when a failure comes after insertion but before the response",
             "inserted_prompt_never_rejected", "failures", error_after_insertion=-32000),
        _bug("cancel-after-insertion", "agent answers $/cancel_request with -32800 after insertion",
             "inserted_prompt_never_rejected", "failures",
             "kotlin-sdk#131", cancel_after_insertion=True),
        _bug("same-id-for-same-content", "agent derives the message ID from the content",
             "distinct_message_ids", "multi-client", id_scheme="content",
             also=("association_points_at_own_submission",)),
        _bug("ids-reset-on-restart", "agent's ID counter starts again after a restart",
             "distinct_message_ids", "import", id_scheme="restart-resets",
             also=("client_content_matches_agent",)),
        _bug("echo-under-other-id", "agent echoes the user message under another ID",
             "echo_names_an_inserted_message", "tiny", echo_same_id=False),
        _bug("never-echo", "agent never reports the inserted user message",
             "every_inserted_message_echoed", "tiny", echo=False),
        _bug("no-idle-after-failure", "agent drops failed work without an idle",
             "failed_work_ends_with_error_idle", "failures",
             "kotlin-sdk#131; rust-sdk simple_agent_v2.rs abandon_prompt", idle_after_failure=False),
        _bug("error-when-abort-raises", "agent reports error instead of cancelled when aborting raises",
             "cancelled_work_ends_cancelled", "failures",
             "agent-client-protocol#171", abort_stop_reason="error"),
        _bug("end-turn-for-cancel", "agent reports end_turn for cancelled work",
             "cancelled_work_ends_cancelled", "failures",
             "claude-agent-acp#694", cancel_stop_reason="end_turn"),
        _bug("second-stop-reason", "agent sends a second, different stop reason for work already ended",
             "no_second_stop_reason", "cancel-race",
             "claude-agent-acp#551", second_stop_reason="end_turn"),
        _bug("tool-update-after-idle", "agent updates a tool call of ended work after the idle",
             "no_update_after_idle_of_its_work", "failures", tool_update_after_idle=True),
        _bug("error-beside-end-turn", "agent puts an error object beside stopReason end_turn",
             "error_only_with_error_stop_reason", "tiny", error_beside_stop_reason=True),
        _bug("no-tool-terminal-before-error", "agent sends the error idle with a tool call still in progress",
             "tools_terminal_before_error_idle", "failures", fail_tools_before_error_idle=False),
        _bug("replay-chunks-without-reset", "agent replays chunks without user_message content []",
             "chunked_replay_resets_first", "lost-response", replay_reset=False),
        _bug("replay-under-new-id", "agent replays a retained message under a new ID",
             "replay_preserves_ids", "lost-response", replay_same_id=False),
        _bug("replay-reexecutes-command", "agent executes a replayed command again",
             "replayed_command_not_reexecuted", "restart", replay_executes_commands=True),
        _bug("replay-without-replay-from", "agent replays when replayFrom is omitted",
             "no_replay_without_replay_from", "lost-response", replay_without_replay_from=True),
        _bug("client-associates-by-content", "client takes the first echo with its prompt's content as its own",
             "association_points_at_own_submission", "multi-client", client_associates_by="content"),
        _bug("client-associates-by-order", "client takes the next echo as its own",
             "association_points_at_own_submission", "multi-client", client_associates_by="order"),
        _bug("client-idle-completes-prompt", "client takes the next idle as completion of its own prompt",
             "client_completion_belief_is_true", "cancel-race", "claude-agent-acp#480", client_idle_completes=True),
        _bug("client-keeps-optimistic-copy", "client keeps its optimistic copy when the echo came first",
             "single_canonical_copy", "tiny", client_reconciles=False),
    )
}


def get_bug(name: str) -> Bug:
    try:
        return BUGS[name]
    except KeyError:
        raise KeyError(f"unknown bug {name!r}; `acp-lifecycle bugs --list` shows them") from None
