"""The probe's scenarios: what the client does in each run, and what counts as applicable.

Each scenario is a function of an ``AgentSession`` after the handshake and a
deadline helper; it returns ``(status, note)``: ``"ran"``, ``"not-applicable"``
(the agent cannot be put in that situation: it made no tool call, asked no
permission), or ``"timeout"`` (a step did not finish in time). The prompt
text carries the provider's keywords (sims/provider/script.py).
"""

from __future__ import annotations

import time

__all__ = ["SCENARIOS", "DESCRIPTIONS", "PATIENCE"]

_TOOL_PROMPT = "[tool] Run the shell command `touch acp-probe.txt` in the working directory."


class Clock:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())


def _finish(s, rid: int, clock: Clock, what: str = "the prompt") -> tuple[str, str]:
    if s.wait_response(rid, clock.left()) is None:
        return "timeout", f"no answer to {what} in time"
    return "ran", ""


def plain(s, clock):
    return _finish(s, s.prompt("Say hello."), clock)


def _tool(s, clock, policy: str):
    s.permission = policy
    rid = s.prompt(_TOOL_PROMPT)
    status, note = _finish(s, rid, clock)
    if status != "ran":
        return status, note
    if not s.permissions and not s.saw_update("tool_call"):
        return "not-applicable", "the agent made no tool call"
    if not s.permissions:
        return "ran", "the agent ran the tool without asking permission"
    return "ran", ""


def tool_allow(s, clock):
    return _tool(s, clock, "allow")


def tool_deny(s, clock):
    return _tool(s, clock, "reject")


def _first_output(s, rid: int, clock: Clock) -> bool:
    """Wait for the first agent_message_chunk of a slow turn (or the answer)."""
    def spoke():
        return any((u.get("update") or {}).get("sessionUpdate") == "agent_message_chunk"
                   and ((u["update"].get("content") or {}).get("text") or "").strip() for u in s.updates)

    return s.until(lambda: spoke() or rid in s.responses, clock.left())


def cancel(s, clock):
    rid = s.prompt("[slow] Count slowly to forty.")
    if not _first_output(s, rid, clock):
        return "timeout", "no output from the slow turn in time"
    if rid in s.responses:
        return "not-applicable", "the turn ended before any output could be cancelled"
    s.cancel()
    return _finish(s, rid, clock)


def _held_permission(s, clock) -> tuple[int, tuple[str, str] | None]:
    """Prompt for a tool call and keep its permission request pending: (the prompt's id, the
    outcome when the agent cannot be put there)."""
    s.permission = "hold"
    rid = s.prompt(_TOOL_PROMPT)
    if not s.until(lambda: s.held or rid in s.responses, clock.left()):
        return rid, ("timeout", "no permission request and no answer in time")
    if not s.held:
        return rid, ("not-applicable", "the agent asked no permission for its tool call"
                     if s.saw_update("tool_call") else "the agent made no tool call")
    return rid, None


def cancel_permission(s, clock):
    rid, outcome = _held_permission(s, clock)
    if outcome is not None:
        return outcome
    s.cancel()
    for req in s.held:  # v1: a client that cancels answers its pending permission requests "cancelled"
        s.answer(req, {"outcome": {"outcome": "cancelled"}})
    s.held.clear()
    return _finish(s, rid, clock)


#: Seconds ``second-prompt`` waits for the second answer once the first is answered: an agent
#: that merged the two prompts into one turn never answers the second.
GRACE = 20.0
#: Seconds the client of ``cancel-permission-wait`` waits, after ``session/cancel``, for the agent
#: to withdraw its pending permission request (``$/cancel_request``) or end the turn.
WAIT = 5.0


def cancel_permission_wait(s, clock):
    """``session/cancel`` with a permission request pending, then *wait*: answer the request only
    once the agent withdrew it (``$/cancel_request``: answered -32800), ended the turn, or WAIT
    seconds passed (then ``cancelled``, as v1 asks)."""
    rid, outcome = _held_permission(s, clock)
    if outcome is not None:
        return outcome
    pending, start = list(s.held), time.monotonic()
    s.cancel()

    def withdrawn():
        return {repr(r["id"]) for r in pending} <= {repr(x) for x in s.cancel_requests}

    s.until(lambda: rid in s.responses or withdrawn(), min(WAIT, clock.left()))
    waited = time.monotonic() - start
    for req in pending:
        if any(repr(x) == repr(req["id"]) for x in s.cancel_requests):
            s.answer(req, error={"code": -32800, "message": "Request cancelled"})
        else:
            s.answer(req, {"outcome": {"outcome": "cancelled"}})
    s.held.clear()
    if withdrawn():
        how = "the agent withdrew its permission request ($/cancel_request)"
    elif rid in s.responses:
        how = f"the agent answered the prompt {waited:.1f} s after session/cancel with its permission request pending"
    else:
        how = f"the agent waited for the permission answer (answered 'cancelled' after {waited:.0f} s)"
    status, note = _finish(s, rid, clock)
    return status, note or how


def _failing(keyword: str):
    def run(s, clock):
        return _finish(s, s.prompt(f"{keyword} Say hello."), clock)

    return run


def second_prompt(s, clock):
    first = s.prompt("[slow] Count slowly to forty.")
    if not _first_output(s, first, clock):
        return "timeout", "no output from the slow turn in time"
    if first in s.responses:
        return "not-applicable", "the first turn ended before the second prompt could be sent"
    second = s.prompt("Say hello.")
    if not s.until(lambda: first in s.responses, clock.left()):
        return "timeout", "no answer to the first prompt in time"
    answered = time.monotonic()
    if not s.until(lambda: second in s.responses, min(GRACE, clock.left())):
        if clock.left() > 0:  # the agent is idle and keeps the second prompt: that is the finding, not a timeout
            return "ran", f"the second prompt was never answered ({time.monotonic() - answered:.0f} s after the first's answer)"
        return "timeout", "no answer to the second prompt in time"
    return "ran", ""


def resume_unknown(s, clock):
    """Resume a session the agent never made (``session/resume``, or v1 ``session/load`` where the
    agent offers no resume), then a plain prompt on the session it did make."""
    rid = s.resume_unknown()
    if rid is None:
        return "not-applicable", "the agent offers neither session/resume nor session/load"
    answer = s.wait_response(rid, clock.left())
    if answer is None:
        return "timeout", "no answer to the resume in time"
    error = answer.get("error") if isinstance(answer.get("error"), dict) else None
    how = (f"the resume was rejected with error {error.get('code')}" if error is not None
           else "the resume of a session the agent never made was answered with success")
    status, note = _finish(s, s.prompt("Say hello."), clock)
    return status, note or how


#: name -> (function, what it does), in the order the probe runs them
SCENARIOS = {
    "plain": (plain, "a plain prompt answered in chunks"),
    "tool-allow": (tool_allow, "a tool call; the permission request is allowed"),
    "tool-deny": (tool_deny, "a tool call; the permission request is rejected"),
    "cancel": (cancel, "session/cancel in the middle of a slow answer"),
    "cancel-permission": (cancel_permission, "session/cancel while a permission request is pending"),
    "cancel-permission-wait": (cancel_permission_wait, "session/cancel with a permission request pending; the "
                               "client answers it only once the agent withdraws it or ends the turn"),
    "fail-401": (_failing("[fail-401]"), "the provider answers 401 before any output"),
    "fail-500": (_failing("[fail-500]"), "the provider answers 500 before any output"),
    "overloaded": (_failing("[overloaded]"), "the provider answers 529 (overloaded) before any output"),
    "fail-midstream": (_failing("[fail-midstream]"), "the provider's stream breaks after two chunks"),
    "second-prompt": (second_prompt, "a second session/prompt while the first is still streaming"),
    "resume-unknown": (resume_unknown, "a session/resume (v1: or session/load) of a session the agent never made, "
                       "then a plain prompt"),
}
DESCRIPTIONS = {name: what for name, (_, what) in SCENARIOS.items()}
#: Scenarios whose time is the per-scenario timeout times this: agents retry a 500 or a 529
#: with backoff (gemini-cli about 65 s, qwen-code about 100 s) before they answer the prompt.
PATIENCE = {"fail-500": 2.5, "overloaded": 2.5}
