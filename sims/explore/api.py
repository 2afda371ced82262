"""The explorer's JSON answers: a state as each participant sees it, the enabled actions, the verdicts.

``state_answer(model, path)`` is what ``GET /api/state`` returns (docs/explore.md
describes every field); the page and the tests read it.
"""

from __future__ import annotations

from .chart import sequence_svg
from .model_access import BadRequest, Model, action_text, agent_message, client_message, summary, to_data

__all__ = ["state_answer", "participants", "BadRequest"]


def _msg(m: tuple, agent_side: bool) -> dict:
    wire = agent_message(m) if agent_side else client_message(m)
    return {"summary": summary(wire), "message": wire}


def participants(state) -> dict:
    """The state as each participant sees it: the agent's requests and work, each client's feed and requests."""
    a = state.agent
    work = None
    if a.work is not None:
        w = a.work
        work = {"serial": w.serial, "inputs": [f"msg_{m}" for m in w.inputs],
                "tools": [{"toolCallId": f"call_{t}", "status": st} for t, st in w.tools],
                "cancelling": w.cancelling, "permission": f"perm_{w.perm}" if w.perm else None}
    agent = {
        "state": a.fg, "stopReason": a.stop or None, "work": work,
        "requests": [{"client": r.cid, "id": r.rid, "content": r.content, "phase": r.phase,
                      "messageId": f"msg_{r.mid}" if r.mid else None,
                      "answers": [f"messageId msg_{x[1]}" if x[0] == "ok" else f"error {x[1]}" for x in r.answers],
                      "connectionLost": r.orphan} for r in a.reqs],
        "conversation": [{"messageId": f"msg_{m.mid}", "content": m.content, "kind": m.kind, "retained": m.retained,
                          "echoOwedTo": [c for c in range(len(state.clients)) if m.owed >> c & 1]} for m in a.conv],
        "notTakenByWork": [f"msg_{m}" for m in a.pending],
        "attached": [c for c in range(len(state.clients)) if a.attached >> c & 1],
    }
    clients = []
    for c, cl in enumerate(state.clients):
        clients.append({
            "client": c, "connected": cl.connected, "state": cl.fg,
            "resuming": {0: None, 1: "without replay", 2: "with replay"}[cl.resuming],
            "feed": [{"key": f"msg_{k}" if k > 0 else f"(own prompt id={-k})", "content": list(content),
                      "optimistic": opt} for k, content, opt in cl.view],
            "submissions": [{"id": s.rid, "content": s.content, "status": s.status,
                             "messageId": f"msg_{s.mid}" if s.mid else None,
                             "retryOf": s.retry_of or None} for s in cl.subs],
            "permissionRequests": [{"id": f"perm_{p}", "status": st} for p, st in cl.perms],
        })
    channels = [{"client": c, "toAgent": [_msg(m, False) for m in state.up[c]],
                 "toClient": [_msg(m, True) for m in state.down[c]]} for c in range(len(state.clients))]
    return {"agent": agent, "clients": clients, "channels": channels}


def _actor(action: tuple) -> str:
    name = action[0]
    if name.startswith("Client") or name == "ConnectionLost":
        return f"client {action[1]}" if name != "ConnectionLost" else "environment"
    return "agent"


def state_answer(model: Model, path: list[int]) -> dict:
    """The whole answer of ``/api/state`` for a run (a list of action indices)."""
    trace = model.walk(path)
    state = trace[-1][1].state if trace else model.initial()
    history = []
    broken = []
    for n, (pre, step) in enumerate(trace, 1):
        found = model.step_findings(pre, step)
        history.append({"step": n, "index": path[n - 1], "action": action_text(step.action),
                        "messages": model.messages(pre, step), "breaks": found})
        broken += [dict(f, step=n) for f in found]
    enabled = []
    for i, step in enumerate(model.successors(state)):
        enabled.append({"index": i, "action": action_text(step.action), "actor": _actor(step.action),
                        "fingerprint": model.fingerprint(step.state),
                        "messages": model.messages(state, step), "breaks": model.step_findings(state, step)})
    if not enabled:  # the run has ended: an obligation still open can never be met (check: "no step is left")
        broken += [dict(f, step=len(path), message=f"{f['message']} (no step is left)")
                   for f in model.obligations(state)]
    return {
        "config": model.config, "member": model.member, "rules": model.rule_set, "bug": model.bug or None,
        "path": path, "query": model.query(path),
        "bounds": to_data_config(model),
        "fingerprint": model.fingerprint(state),
        "participants": participants(state),
        "enabled": enabled,
        "history": history,
        "verdicts": {
            "nextStepCouldBreak": sorted({f["property"] for e in enabled for f in e["breaks"]}),
            "brokenSoFar": broken,
            "falseNow": model.state_findings(state),
            "openObligations": model.obligations(state),
            "reached": model.reached(trace),
        },
        "chart": sequence_svg(len(state.clients), history, flush=not model.cfg.down_latency),
    }


def to_data_config(model: Model) -> dict:
    from dataclasses import asdict

    return to_data(asdict(model.cfg))
