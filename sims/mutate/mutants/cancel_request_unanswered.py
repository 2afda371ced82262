"""$/cancel_request stops a prompt not yet inserted and never answers it."""

from acp_lifecycle.model.machines import REQUEST
from acp_lifecycle.model.state import NOT_INSERTED
from acp_lifecycle.sims.mutate.core import Mutant, post, with_agent, with_sent


def _fix(pre, step):
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel_req":
        c = step.action[1]
        rid = pre.up[c][0][1]
        a = step.state.agent
        reqs = tuple(
            r._replace(phase=REQUEST[(pre.agent.reqs[i].phase, "drop")], answers=())
            if r.cid == c and r.rid == rid and not r.orphan and pre.agent.reqs[i].phase in NOT_INSERTED
            else r
            for i, r in enumerate(a.reqs[: len(pre.agent.reqs)])
        ) + a.reqs[len(pre.agent.reqs):]
        step = with_sent(pre, step, lambda cc, m: [] if m[0] == "err" else [m])
        step = with_agent(step, a._replace(reqs=reqs))
    return step


MUTANT = Mutant(
    "cancel-request-unanswered",
    "agent drops a prompt not yet inserted on $/cancel_request without sending any response",
    ("S240-CANCELREQ-STILL-RESPOND",),
    "cancelled_request_still_answered",
    "failures",
    patches=(post("agent", "agent_receive", _fix),),
    source="kotlin-sdk#131: a cancelled request was left unanswered",
)
