"""A control: the agent repeats the current running state with each tool call update."""

from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post


def _fix(pre, step):
    w = pre.agent.work
    if step.action[0] == "AgentToolCall" and pre.agent.fg == "running" and w is not None and not w.cancelling:
        step = broadcast(step, ("state", "running", "", 0))
    return step


MUTANT = Mutant(
    "repeated-running-snapshot",
    "agent sends state_update running again, unchanged, beside a tool call update",
    ("S240-STATE-REPORT-RUNNING",),
    "state_changes_only_with_work",
    "failures",
    patches=(post("agent", "agent_work", _fix),),
    equivalent=(
        "2.4.0: \"Repeated snapshots are idempotent, not additional work, completions, or usage. A repeated "
        "state may carry updated information without another state transition.\""
    ),
)
