"""A $/cancel_request for an answered prompt is answered again."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_agent


def _fix(pre, step):
    if step.action[:3] == ("AgentReceive", step.action[1], "cancel_req"):
        c = step.action[1]
        rid = pre.up[c][0][1]
        for r in pre.agent.reqs:
            if r.cid == c and r.rid == rid and not r.orphan and any(x[0] == "ok" for x in r.answers):
                from acp_lifecycle.sims.mutate.core import broadcast

                step = broadcast(step, ("ok", rid, r.mid), 1 << c)
                reqs = tuple(x._replace(answers=x.answers + (("ok", r.mid),)) if x is r else x for x in step.state.agent.reqs)
                step = with_agent(step, step.state.agent._replace(reqs=reqs))
    return step


MUTANT = Mutant(
    "second-response-to-cancel-request",
    "agent answers $/cancel_request of an already answered prompt with the prompt's response again",
    ("S240-CANCELREQ-NO-SECOND-RESPONSE",),
    "one_response_per_request",
    "failures",
    patches=(post("agent", "_agent_receive", _fix),),
    source="kotlin-sdk#131 (a cancel arriving after the reply)",
)
