"""Work that ends normally sends no idle: the agent just stops."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_agent, with_sent


def _fix(pre, step):
    if step.action[0] == "AgentEndWork" and step.action[1] != "cancelled":
        step = with_sent(pre, step, lambda c, m: [] if m[0] == "state" else [m])
        a = step.state.agent
        step = with_agent(step, a._replace(fg=pre.agent.fg))
    return step


MUTANT = Mutant(
    "work-ends-silently",
    "agent finishes foreground work without reporting idle (the session stays running)",
    ("S240-STATE-REPORT-IDLE", "S240-STATE-IDLE-WHEN-NONE"),
    "ended_work_reported_idle",
    "tiny",
    patches=(post("agent", "agent_work", _fix),),
    source="kotlin-sdk#131: a v2 prompt turn could end without its mandatory terminal state_update",
)
