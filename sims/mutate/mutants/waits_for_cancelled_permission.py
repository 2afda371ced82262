"""After session/cancel the work keeps waiting for its permission answer."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_agent, wrap


def _cancel(pre, step):
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel":
        w0 = pre.agent.work
        w = step.state.agent.work
        if w0 is not None and w0.perm and w is not None:
            a = step.state.agent._replace(work=w._replace(perm=w0.perm))
            step = with_agent(step, a)
    return step


def _make(original):
    def _agent_work(s, cfg, rules, out):
        w = s.agent.work
        if w is not None and w.cancelling and w.perm:
            return  # still waiting for the answer
        original(s, cfg, rules, out)

    return _agent_work


MUTANT = Mutant(
    "waits-for-cancelled-permission",
    "agent keeps waiting for the answer to a permission request of work a session/cancel stopped",
    ("S240-CANCEL-PERM-STOP-WAITING", "S240-CANCEL-IDLE-CANCELLED"),
    "cancelled_work_ends",
    "permission",
    patches=(post("agent", "agent_receive", _cancel), wrap("agent", "agent_work", _make)),
    source="ACP TCK ACP-INFO-CANCEL-202 (cancel while a permission is pending)",
)
