"""The user message is reported when its ID is reserved, before insertion."""

from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post


def _fix(pre, step):
    if step.action[0] == "AgentReserveId":
        r = step.state.agent.reqs[step.action[1]]
        step = broadcast(step, ("user_message", r.mid, (r.content,), False, None))
    return step


MUTANT = Mutant(
    "echo-at-reservation",
    "agent sends the user_message as soon as it assigns the ID, before the message is inserted",
    ("S240-PROMPT-NEITHER-PRECEDES",),
    "echo_names_an_inserted_message",
    "tiny",
    patches=(post("agent", "agent_prompts", _fix),),
)
