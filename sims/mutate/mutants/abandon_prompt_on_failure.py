"""A failure before the response abandons the inserted prompt: it is never answered."""

from acp_lifecycle.model.machines import REQUEST
from acp_lifecycle.sims.mutate.core import Mutant, post, with_agent


def _fix(pre, step):
    if step.action[:2] == ("AgentFailWork", "stops-work"):
        w = pre.agent.work
        a = step.state.agent
        reqs = tuple(
            r._replace(phase=REQUEST[(r.phase, "drop")]) if r.phase == "inserted" and not r.answers and r.mid in w.inputs else r
            for r in a.reqs
        )
        step = with_agent(step, a._replace(reqs=reqs))
    return step


MUTANT = Mutant(
    "abandon-prompt-on-failure",
    "agent abandons an inserted prompt whose work fails before the response, and never answers it",
    ("RFD-INSERT-RESPOND",),
    "every_prompt_answered",
    "failures",
    patches=(post("agent", "agent_faults", _fix),),
    source="rust-sdk simple_agent_v2.rs abandon_prompt",
)
