"""A prompt rejected after its ID was reserved stays in the conversation and is echoed."""

from acp_lifecycle.model.state import Msg
from acp_lifecycle.sims.mutate.core import Mutant, post, with_agent


def _fix(pre, step):
    if step.action[0] == "AgentRejectPrompt":
        idx = step.action[1]
        r = pre.agent.reqs[idx]
        if r.mid:
            a = step.state.agent
            # the reserved slot was already in the history: it is not taken out
            m = Msg(r.mid, r.content, True, idx, "prompt", a.attached, 0, 0)
            step = with_agent(step, a._replace(conv=a.conv + (m,)))
    return step


MUTANT = Mutant(
    "rejected-reserved-echoed",
    "agent keeps a rejected prompt whose ID it reserved in its conversation, and reports it",
    ("S240-PROMPT-REJECTED-NO-ECHO",),
    "rejected_submission_never_echoed",
    "tiny",
    patches=(post("agent", "agent_prompts", _fix),),
)
