"""A $/cancel_request for an answered prompt is answered again (and the agent records the second response).

The same fault as ``second-response-unrecorded``, whose records still say one response."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_agent
from acp_lifecycle.sims.mutate.mutants.second_response_unrecorded import answered_again


def _fix(pre, step):
    new = answered_again(pre, step)
    if new is step:
        return step
    c = step.action[1]
    rid = pre.up[c][0][1]
    reqs = tuple(x._replace(answers=x.answers + (("ok", x.mid),)) if x.cid == c and x.rid == rid and not x.orphan else x
                 for x in new.state.agent.reqs)
    return with_agent(new, new.state.agent._replace(reqs=reqs))


MUTANT = Mutant(
    "second-response-to-cancel-request",
    "agent answers $/cancel_request of an already answered prompt with the prompt's response again",
    ("S240-CANCELREQ-NO-SECOND-RESPONSE",),
    "one_response_per_request",
    "failures",
    patches=(post("agent", "agent_receive", _fix),),
    source="kotlin-sdk#131 (a cancel arriving after the reply)",
)
