"""Judges of a resume and its replay: chunks reset first, no replay without replayFrom, the snapshot
before the response."""

from __future__ import annotations

from ..observed import Closed, ResumeRequest, ResumeResult, StateUpdate, UserChunk, UserMessage
from ._judge import Judge, rename_items, with_item

__all__ = ['JUDGES']

def _chunked_replay_resets_first(state, rec):
    """state: None outside a resume window, else (replay asked for, IDs cleared by content [])."""
    t = type(rec)
    if t is ResumeRequest:
        return (rec.replay, ()), ""
    if t is ResumeResult or t is Closed:
        return None, ""
    if state is None:
        return state, ""
    replay, cleared = state
    if t is UserMessage and rec.content == () and rec.message_id not in cleared:
        return (replay, with_item(cleared, rec.message_id)), ""
    if t is UserChunk and replay and rec.message_id not in cleared:
        return ((replay, with_item(cleared, rec.message_id)),
                f"a replayed user_message_chunk of {rec.message_id} without a user_message with content [] first")
    return state, ""


def _rename_cleared(state, f):
    return state if state is None else (state[0], rename_items(state[1], f))


def _no_replay_without_replay_from(state, rec):
    """state: None outside a resume window, else whether the resume asked for replay."""
    t = type(rec)
    if t is ResumeRequest:
        return rec.replay, ""
    if t is ResumeResult or t is Closed:
        return None, ""
    if state is False and (t is UserMessage or t is UserChunk):
        what = "user_message" if t is UserMessage else "user_message_chunk"
        return state, f"a {what} for {rec.message_id} while resuming without replayFrom"
    return state, ""


def _resume_snapshot_before_response(state, rec):
    """state: None outside a resume window, else whether a state_update came since the request."""
    t = type(rec)
    if t is ResumeRequest:
        return False, ""
    if t is StateUpdate:
        return (True if state is False else state), ""
    if t is ResumeResult:
        why = "the session/resume response is not preceded by a state_update after the request" if (
            state is False and rec.ok) else ""
        return None, why
    if t is Closed:
        return None, ""
    return state, ""


_RESUME = (ResumeRequest, ResumeResult, Closed)


JUDGES = (
    Judge("chunked_replay_resets_first", "MUST", "rfd",
          "a replayed user_message_chunk comes after user_message content [] for its messageId",
          ("RFD-REPLAY-CHUNK-RESET", "RFD-METADATA-NOT-RESET"), (UserMessage, UserChunk) + _RESUME, None,
          ("sometimes_chunked_replay",), per="view", step=_chunked_replay_resets_first,
          rename=_rename_cleared),
    Judge("resume_snapshot_before_response", "MUST", "2.4.0",
          "a state_update comes after the resume request (and any replay) and before its response",
          ("S240-RESUME-STATE-BEFORE-RESPONSE", "S240-STATE-RESUME-SNAPSHOT", "RFD-OPEN-RESUME-STATE"),
          (StateUpdate,) + _RESUME, None, ("sometimes_client_resumed",), per="view",
          step=_resume_snapshot_before_response),
    Judge("no_replay_without_replay_from", "MUST NOT", "rfd", "a resume without replayFrom replays no user message",
          ("RFD-REPLAY-ONLY-WITH-REPLAY-FROM",), (UserMessage, UserChunk) + _RESUME, None,
          ("sometimes_resume_without_replay",), per="view", step=_no_replay_without_replay_from),
)
