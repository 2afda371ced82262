"""Foreground work starts without a running state_update."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_sent


def _fix(pre, step):
    if step.action[0] in ("AgentBeginWork", "AgentInitiateWork") and "blocked" not in step.action:
        step = with_sent(pre, step, lambda c, m: [] if m[0] == "state" else [m])
    return step


MUTANT = Mutant(
    "silent-start",
    "agent starts foreground work without reporting running (the session looks idle)",
    ("S240-STATE-REPORT-RUNNING", "S240-STATE-NEW-IDLE", "RFD-FAIL-ERROR-IDLE"),
    "client_sees_current_state",
    "tiny",
    patches=(post("agent", "agent_work", _fix),),
)
