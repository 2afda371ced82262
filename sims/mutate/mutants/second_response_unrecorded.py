"""A $/cancel_request for an answered prompt is answered again, and the agent's records show one response.

The fault as an implementation ships it: the handler of $/cancel_request answers from its own
table of pending requests, which the prompt's handler cleared late; the prompt's record (the
model's ``Req.answers``) is written by the prompt handler only, so it still says "answered once".
A rule that read that record would not see the second response; the judge reads the messages."""

from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post


def answered_again(pre, step):
    """The step, where the agent received a $/cancel_request for an answered prompt, with the prompt's
    success response sent again (nothing else changed)."""
    if step.action[:3] == ("AgentReceive", step.action[1], "cancel_req"):
        c = step.action[1]
        rid = pre.up[c][0][1]
        for r in pre.agent.reqs:
            if r.cid == c and r.rid == rid and not r.orphan and any(x[0] == "ok" for x in r.answers):
                step = broadcast(step, ("ok", rid, r.mid), 1 << c)
    return step


MUTANT = Mutant(
    "second-response-unrecorded",
    "agent answers $/cancel_request of an answered prompt with its response again, its records still saying one",
    ("S240-CANCELREQ-NO-SECOND-RESPONSE", "JSONRPC-REPLY"),
    "one_response_per_request",
    "failures",
    patches=(post("agent", "agent_receive", answered_again),),
)
