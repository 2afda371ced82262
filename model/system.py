"""The composed system: one session, one agent, N clients, FIFO channels.

Rule 1: every step of the composed model is a function of (state, Config,
Rules) defined in this package: the state in ``state.py``, the agent's steps
in ``agent.py``, the clients' in ``clients.py``, composed here. A step returns the next state and the messages the
agent emitted in it; nothing else is remembered. Properties (``properties/``)
and explorers (``sims/``) only read states and steps.

Rule 2: the component lifecycles are not written here: a request's phase, the
foreground state, a tool call's status and a submission's status move only
through the tables of ``machines.py``. Ghost fields (marked ``ghost``) record
facts a property needs and the participants never read.

Theory of operation (the RFD's sequence, in the model's terms)::

    client                      agent
      | session/prompt  ---->     received -> [held] -> [reserved]
      |                           inserted  (message gets its ID, joins the conversation)
      | <---- result{messageId}   answered  (any time after insertion)
      | <---- user_message(_chunk) (any time after insertion, to every attached client)
      | <---- state_update running / requires_action / idle{stopReason[, error]}

* Each client has its own connection: one FIFO channel each way (``up`` to the
  agent, ``down`` to the client). Delivering the head of a channel is a step of
  its own, so every interleaving of the two directions and of the clients is
  explored. A lost connection drops what both channels still hold.
* The agent is *every agent the RFD allows*: wherever the RFD leaves a choice
  (hold or insert at once, reserve an ID, retain or not, echo before or after the
  response, whole message or chunk, running before insertion, tool calls,
  permission requests, when work ends, failures at any point, agent-initiated
  work, internal cancellation of a prompt not yet inserted), each choice is a
  separate step.
* A correct client keeps what the RFD says a client keeps: its submissions and
  their (request id -> messageId) association, a view of the conversation with
  optimistic entries for its pending submissions, and the last foreground state
  it saw. Message updates follow the 2.4.0 upsert rules: ``content`` replaces
  (``[]`` clears), chunks append.

Abstractions, and why they are safe:

1. Message content is one symbol, and a streamed echo is one chunk. Every rule
   about chunks is about *whether* content is appended or replaced, which one
   chunk already shows (a duplicate is ``("a", "a")``).
2. The agent broadcasts an update to all attached clients in one step. Each
   connection is still its own FIFO channel and delivery interleaves freely, so
   no ordering a real agent could produce on one connection is lost.
3. Budgets (``Config``) bound everything that could repeat. A property that
   fails only beyond a bound is not seen: raise the bound (``wide``) or use the
   Hypothesis explorer of a later issue.
4. JSON-RPC request ids count up per client for the whole run, across
   reconnections; each client starts at 1, so two clients do share ids.
5. Tool call ids and permission request ids are global counters: their values
   carry no meaning the rules read.
"""

from __future__ import annotations

from typing import Final

from . import parts as _parts
from . import state as state_module
from .agent import agent_faults, agent_prompts, agent_receive, agent_work, answer, echo, end, insert, reject
from .clients import client_receive, clients
from .composed import composed
from .composition import NONE, Composition, composition
from .config import RFD_RULES, Config, Rules
from .judges import SENT, events_of_step
from .state import Step, System, replace_at
from .state import initial_state as _core_initial_state

__all__ = [*state_module.__all__, "successors"]
# re-exported: the model's state types and constants (state.__all__); not ``import *``, which a
# module compiled by mypyc does not bind (docs/performance.md, "A compiled model")
for _name in state_module.__all__:
    globals().setdefault(_name, getattr(state_module, _name))

# The messages the participants exchange are listed once, in state.py ("Messages").


# ---------------------------------------------------------------------------
# Successors
# ---------------------------------------------------------------------------


def initial_state(cfg: Config, rules: Rules = RFD_RULES) -> System:
    """A new session under ``rules``: idle, every client attached, nothing sent yet; what the rule
    set's judges remember at the start, and what its proposals keep (``model/composition.py``)."""
    comp = composition(rules)
    if comp is NONE:
        return _core_initial_state(cfg)
    return _core_initial_state(cfg, comp.judges.start(cfg.clients), comp.start(cfg))


def successors(s: System, cfg: Config, rules: Rules) -> list[Step]:
    """Every step enabled in ``s``, in a deterministic order: the core's, then the proposals' the rules compose.
    A start made without the rules (``initial_state(cfg)``, no proposal's state in it) is taken as theirs."""
    out: list[Step] = []
    p = rules.parts or _DEFAULT
    comp = composed(rules)  # the last rules asked (composed.py)
    if comp is not NONE and len(s.ext) != len(comp.proposals) and not s.ext and s == _core_initial_state(cfg):
        s = initial_state(cfg, rules)
    _transport(s, cfg, rules, out, p, comp)
    p.agent_prompts(s, cfg, rules, out)
    p.agent_work(s, cfg, rules, out)
    p.agent_faults(s, cfg, rules, out)
    p.clients(s, cfg, rules, out)
    if comp is not NONE:
        out = comp.after_core(s, cfg, rules, out)
        comp.add_steps(s, cfg, rules, out)
    if p.keep is not None:
        out = [step for step in out if p.keep(s, step)]
    if rules.protocol == "v1":
        out = [_without_state_updates(s, step) for step in out]
    if not cfg.down_latency:
        out = [_flush(step, rules, comp) for step in out]
    observe = comp.judges.observer(s.seen)  # the steps of one state share its judges' memory
    records = comp.records if comp is not NONE else None
    sent = SENT if comp.judges.reads_sent else None
    return [_judged(s, step, observe, records, sent) for step in out]


def _judged(pre: System, step: Step, observe, records=None, sent=None) -> Step:
    """The step with what the judges remember updated (``System.seen``): the judges are observers
    composed with the system, their state part of the explored state."""
    events = events_of_step(pre, step, records, sent)
    if not events:
        return step
    seen, found = observe(events)
    if seen == step.state.seen:
        return step._replace(found=found) if found else step
    return step._replace(state=step.state._replace(seen=seen), found=found)


def _without_state_updates(pre: System, step: Step) -> Step:
    """v1 has no state_update: drop the ones a step sent (the steps are shared with v2)."""
    if not any(m[0] == "state" for _, m in step.emitted):
        return step
    s = step.state
    down = tuple(
        chan[: len(old)] + tuple(m for m in chan[len(old) :] if m[0] != "state") if len(chan) >= len(old) else chan
        for old, chan in zip(pre.down, s.down)
    )
    emitted = tuple((c, m) for c, m in step.emitted if m[0] != "state")
    return step._replace(state=s._replace(down=down), emitted=emitted)


def _flush(step: Step, rules: Rules, comp: Composition = NONE) -> Step:
    """Deliver everything the step sent to the clients at once (down_latency=False)."""
    s = step.state
    if not any(chan for chan in s.down):  # a generator: mypyc makes the loop (``any(s.down)`` is a call)
        return step
    if comp.client_receive:
        for c, chan in enumerate(s.down):
            for msg in chan:
                s = comp.client_receives(s, c, msg)
    clients = list(s.clients)
    receive = (rules.parts or _DEFAULT).client_receive
    # the model's own clients read only the client, the message and the rules (a mutant's may
    # read the whole state): their answers are remembered, per rule set
    memo = _received(rules) if receive is _DEFAULT.client_receive else None
    for c, chan in enumerate(s.down):
        for msg in chan:
            if memo is None:
                clients[c] = receive(s, c, clients[c], msg, rules)
                continue
            key = (c, clients[c], msg)
            got = memo.get(key)
            if got is None:
                if len(memo) >= 100_000:
                    memo.clear()
                got = memo[key] = receive(s, c, clients[c], msg, rules)
            clients[c] = got
    return step._replace(state=s._replace(clients=tuple(clients), down=((),) * len(clients)))


_RECEIVED: Final[list] = [None, {}]


def _received(rules: Rules) -> dict:
    """The remembered client answers under ``rules`` (one rule set at a time)."""
    if _RECEIVED[0] is not rules:
        _RECEIVED[:] = [rules, {}]
    return _RECEIVED[1]


# --- transport ----------------------------------------------------------------


def _transport(s: System, cfg: Config, rules: Rules, out: list[Step], p: _parts.Parts, comp: Composition) -> None:
    for c in range(len(s.clients)):
        if s.up[c] and not (comp.receive and comp.take(s, cfg, rules, c, out)):
            p.agent_receive(s, c, rules, out)
        if s.down[c]:
            msg = s.down[c][0]
            clients = replace_at(s.clients, c, p.client_receive(s, c, s.clients[c], msg, rules))
            nxt = s._replace(clients=clients, down=replace_at(s.down, c, s.down[c][1:]))
            if comp.client_receive:
                nxt = comp.client_receives(nxt, c, msg)
            out.append(Step(("ClientReceive", c, msg[0]), nxt, ()))


#: the model's own parts (``parts.py``): what a mutant changes one of
_DEFAULT: Final = _parts.Parts(
    agent_receive, agent_prompts, agent_work, agent_faults, clients, client_receive,
    end, reject, insert, echo, answer,
)
_parts.DEFAULT = _DEFAULT
