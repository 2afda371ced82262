"""How the live model agent chooses among the steps the spec allows it: a seed, or a named policy.

* ``seed`` (``--seed N``): every allowed step is possible, drawn at random with weights that keep
  runs moving (rejecting a prompt or failing is rarer than going on); between steps the agent may
  wait a few milliseconds, so clients meet every order of their messages and the agent's.
* ``adversarial``: the unusual choices first: hold and reserve before insertion, echo by chunks
  and after the response, tool calls, permission requests, failures after insertion, work that
  ends with updates racing a cancel; still random (seeded) among them. The only policy that skips
  what a SHOULD asks (a failure's idle without its error object), and its report says so.
* ``eager``: the quickest agent: insert, answer, echo whole, start and end work at once.
* ``lazy``: the slowest the spec allows: hold, reserve, queue, answer before the echo, wait.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Policy", "POLICIES", "policy"]

POLICIES = ("seed", "adversarial", "eager", "lazy")

# (action name, first argument or mode) -> weight; a name alone covers every variant
_SEED = {"AgentRejectPrompt": 0.15, "AgentFailWork": 0.4, "AgentFailAndRetry": 0.3, "AgentFailInBackground": 0.1,
         "AgentInitiateWork": 0.2, "AgentRequestPermission": 0.5}
_ADVERSARIAL = {"AgentHold": 4, "AgentReserveId": 4, "AgentRejectPrompt": 0.1, "AgentFailWork": 1.5,
                "AgentFailAndRetry": 1, "AgentRequestPermission": 4, "AgentToolCall": 3, "AgentInitiateWork": 1,
                "AgentEndWork": 0.5, "chunk": 4, "queued": 3, "blocked": 3, "before-insertion": 3}
_EAGER = ("AgentInsert", "AgentRespond", "AgentEcho", "AgentBeginWork", "AgentToolCall", "AgentEndWork")
_LAZY = ("AgentHold", "AgentReserveId", "AgentInsert", "AgentRespond", "AgentEcho", "AgentBeginWork",
         "AgentToolCall", "AgentEndWork")

#: the session budgets of each policy (tool calls, permission requests, failures, agent-initiated work),
#: and the stop reasons a normal end of work may carry
BUDGETS = {
    "seed": dict(tool_calls=3, permissions=2, failures=2, agent_work=1, stop_reasons=("end_turn", "max_tokens")),
    "adversarial": dict(tool_calls=4, permissions=3, failures=3, agent_work=1,
                        stop_reasons=("end_turn", "max_tokens", "refusal")),
    "eager": dict(tool_calls=0, permissions=0, failures=0, agent_work=0, hold=False, hook=False),
    "lazy": dict(tool_calls=1, permissions=1, failures=0, agent_work=0),
}


@dataclass
class Policy:
    name: str
    seed: int
    #: the chance of waiting a tick before the next step, and the tick in seconds
    wait: float
    tick: float

    def __post_init__(self):
        self.rng = random.Random(self.seed)

    @property
    def skips_shoulds(self) -> bool:
        """Does the agent skip what a SHOULD asks, on purpose (``adversarial``: a failure's idle without
        its error object)? The others do what each SHOULD asks; the report says which it was."""
        return self.name == "adversarial"

    def waits(self) -> bool:
        return self.rng.random() < self.wait

    def pause(self) -> float:
        return self.tick * (0.5 + self.rng.random())

    def choose(self, steps: list):
        """One of the enabled steps."""
        if self.name == "eager":
            return min(steps, key=lambda s: (_rank(s.action, _EAGER), _eager_tail(s.action)))
        if self.name == "lazy":
            return min(steps, key=lambda s: (_rank(s.action, _LAZY), _lazy_tail(s.action)))
        table = _ADVERSARIAL if self.name == "adversarial" else _SEED
        weights = [_weight(s.action, table) for s in steps]
        return self.rng.choices(steps, weights=weights)[0]


def _rank(action: tuple, order: tuple) -> int:
    return order.index(action[0]) if action[0] in order else len(order)


def _eager_tail(action: tuple) -> int:
    """Within one kind of step, the plain choice first (whole echo, retained, not queued, not blocked)."""
    return sum(1 for a in action[1:] if a in ("chunk", "live-only", "queued", "blocked", "fail", "before-insertion"))


def _lazy_tail(action: tuple) -> int:
    return -sum(1 for a in action[1:] if a in ("chunk", "queued"))


def _weight(action: tuple, table: dict) -> float:
    w = table.get(action[0], 1.0)
    for a in action[1:]:
        if isinstance(a, str) and a in table:
            w *= table[a]
    return w


def policy(name: str, seed: int) -> Policy:
    wait = {"seed": 0.3, "adversarial": 0.4, "eager": 0.0, "lazy": 0.7}[name]
    return Policy(name, seed, wait, 0.01)
