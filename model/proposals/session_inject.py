"""session-inject: mid-turn input (``session/inject``, queue and steer), its revoke race and ``-32010``.

The proposal: ``docs/rfds/v2/session-inject.mdx`` (pull request #1261, not merged), revision
2026-05-24. A client hands the agent another user message without ending the turn: the agent
accepts it for pending delivery (the response carries its ``messageId``), then delivers it (emits
the ``user_message``) at the next safe break-point of the running turn (``steer``) or once the
turn is idle (``queue``). Until delivery the message is pending: the client may revoke it, and
revoke races delivery at the agent. The proposal says what each outcome looks like; this file
makes the model agent take both and judges that each looks as said.

What is modelled, and what is not (each a reading, said where it is made):

* ``session/inject`` (queue or steer), ``session/revoke_inject`` and ``$/cancel_request`` of an
  inject not accepted yet. Not ``session/replace_inject`` (optional, ``pending.replace``): its race
  with delivery mirrors revoke's and adds no other kind of outcome; not the capability exchange
  (the model's agent supports both modes), observers, sub-agents or elicitation.
* A steer still pending when its turn ends is delivered at idle, like a queued inject (the
  proposal does not say; Codex requeues it on turn completion, which its text cites).
* Pending injects survive an agent restart ("If the agent crashes mid-turn and loses the queue,
  that's a durability bug"); an inject not accepted yet is gone with its connection.
* The flag ``pending_injects_survive_cancel``: the proposal recommends that pending injects
  survive ``session/cancel``; the 2.4.0 text says ``session/cancel`` "Cancels a session's
  foreground work and its prompts not yet inserted", which a pending inject is, read to the letter.
  Under that reading a cancelled inject is never delivered, and a later revoke of it succeeds (it
  will not be delivered, which is what a revoke's success promises).

The sentences quoted have no RFC 2119 keyword but two ("should"); each clause's level is the force
the model gives it.
"""

from __future__ import annotations

from typing import NamedTuple

from ._api import (
    IDLE,
    REQUIRES_ACTION,
    RUNNING,
    Bound,
    Clause,
    Closed,
    Config,
    Document,
    Fault,
    Flag,
    Judge,
    Message,
    Proposal,
    SessionCancel,
    StateSpec,
    StateUpdate,
    UserChunk,
    UserMessage,
    World,
    error,
    error_code,
    error_reason,
    ext_of,
    judged,
    message_id,
    params_of,
    replace_at,
    request,
    result,
    rule,
    sometimes,
    sorted_tuple,
    swap,
    text_of,
    with_item,
)

NAME = "session-inject"

DOCUMENT = Document("Mid-turn input: queue and steer", "docs/rfds/v2/session-inject.mdx (pull request #1261)",
                    "2026-05-24: Review-feedback revisions from PR #1261")

# ---------------------------------------------------------------------------------------------------
# The sentences, verbatim


def _c(cid: str, level: str, section: str, text: str, out_of_scope: str = "") -> Clause:
    return Clause(cid, NAME, level, section, text, out_of_scope)


CLAUSES = (
    _c("INJECT-ACCEPT-MESSAGE-ID", "MUST", "The method",
       "The response carries the agent-assigned `messageId`, matching the v2 prompt lifecycle pattern:"),
    _c("INJECT-DELIVERY-ECHO", "MUST", "The method",
       "At delivery (which happens later for both modes), the agent emits a `user_message` session update with "
       "the same `messageId`."),
    _c("INJECT-QUEUE-AT-IDLE", "MUST", "Semantics",
       "The agent buffers the content and delivers it as a `user_message` notification once `state_change: idle` "
       "fires for the current turn."),
    _c("INJECT-QUEUE-ON-IDLE", "MAY", "Semantics",
       "If a queue lands on an already-idle session, the agent treats it as a normal user message and starts a "
       "turn, though clients should prefer `session/prompt` in that case."),
    _c("INJECT-STEER-BREAK-POINT", "MUST", "Semantics",
       "The agent delivers the content at the next safe break-point during the running turn:"),
    _c("INJECT-STEER-IDLE-REJECTED", "MUST", "Semantics",
       "The agent returns `-32010` with `error.data.reason: \"no_running_turn\"`."),
    _c("INJECT-REVOKE-SUCCESS", "MUST", "Pending injects: revoke and replace",
       "A successful response means the agent will not emit a future `user_message` for that `messageId`:"),
    _c("INJECT-REVOKE-WINS", "MUST", "Pending injects: revoke and replace",
       "If revoke wins, the pending inject is dropped. No later `user_message` is emitted for that `messageId`."),
    _c("INJECT-DELIVERY-WINS", "MUST", "Pending injects: revoke and replace",
       "If delivery wins, the agent returns `-32010 \"Inject precondition failed\"` with `error.data.reason: "
       "\"already_delivered\"` and the `messageId`."),
    _c("INJECT-REVOKE-TOMBSTONE", "MAY", "Pending injects: revoke and replace",
       "If the message was already revoked and the agent still remembers the tombstone, return success.",
       out_of_scope="The model agent does, but a second revoke of one message needs two revokes (--set revokes=2): "
                    "the members the proposal adds send one."),
    _c("INJECT-CANCEL-REQUEST", "MAY", "Pending injects: revoke and replace",
       "`$/cancel_request` still applies to an in-flight `session/inject` request before the accept response is "
       "sent."),
    _c("INJECT-SURVIVE-CANCEL", "SHOULD", "Interaction with other in-flight requests",
       "Pending injects (both queue and steer) survive `session/cancel` and deliver normally once the agent "
       "reaches idle."),
    _c("INJECT-STEER-HELD-PERMISSION", "MUST", "Interaction with other in-flight requests",
       "Steer is held until the permission resolves, then delivered at the next break-point (which may be "
       "immediately, if the permission decision is itself the break-point)."),
    _c("INJECT-COMMIT-DELIVER", "MUST", "Frequently asked questions",
       "Once accepted (the response has gone out with a `messageId`), the agent commits to delivering."),
    _c("INJECT-REPLACE", "MAY", "Pending injects: revoke and replace",
       "Agents may also support replacing pending content.",
       out_of_scope="session/replace_inject is optional (pending.replace) and its race with delivery mirrors "
                    "revoke's; the model does not send it."),
    _c("INJECT-FIFO", "MUST", "Multi-client interaction", "Per-controller delivery is FIFO.",
       out_of_scope="Checked only with two injects from one client (--set injects=2): the members the proposal "
                    "adds send one."),
)

# ---------------------------------------------------------------------------------------------------
# Flags and bounds

SURVIVE = "pending_injects_survive_cancel"

FLAGS = (
    Flag(SURVIVE, (True, False), True,
         "true: pending injects survive session/cancel and are delivered once the agent is idle (the proposal's "
         "recommendation); false: session/cancel cancels them, as the 2.4.0 text's \"its prompts not yet inserted\" "
         "reads, and they are never delivered",
         ("INJECT-SURVIVE-CANCEL", "S240-CANCEL-SCOPE")),
)


def _survive(rules) -> bool:
    return rules.flag(SURVIVE, True)


BOUNDS = (
    Bound("injects", (0, 2), "session/inject requests all clients together may send"),
    Bound("revokes", (0, 2), "session/revoke_inject requests all clients together may send"),
)

# ---------------------------------------------------------------------------------------------------
# What the participants keep


class Inject(NamedTuple):
    """A ``session/inject`` as the agent received it."""

    cid: int
    rid: int
    mode: str  # "queue" | "steer"
    content: str
    #: "received" (not answered yet), "pending" (accepted), "delivered", "revoked", "rejected",
    #: "cancelled" (by session/cancel, flag false) or "dropped" (its connection went before an answer)
    phase: str
    mid: int  # 0 until accepted
    cancel_asked: bool  # a $/cancel_request for it reached the agent before it was answered


class Held(NamedTuple):
    """An inject as the client that sent it sees it."""

    rid: int
    mode: str
    #: "sent", "accepted", "rejected", "delivered" (its user_message came), "revoking", "revoked",
    #: "refused" (the revoke was answered with an error), "unknown" (the connection went first)
    status: str
    mid: int
    revoke_rid: int
    #: the client revokes it once accepted: it decides so when it injects, so that the runs where it never
    #: does end (the agent's commitment to deliver must not rest on a revoke the client may send)
    will_revoke: bool = False


class State(NamedTuple):
    injects: tuple = ()  # (Inject, ...) in order of receipt
    clients: tuple = ()  # per client: (Held, ...)


def _start(cfg: Config) -> State:
    return State((), ((),) * cfg.clients)


STATE = StateSpec(_start, client_fields=("cid",), id_fields=("mid",), per_client="clients",
                  ids=lambda cfg: cfg.bound("injects"))

# ---------------------------------------------------------------------------------------------------
# Messages. Client -> agent:
#   ("inject", rid, mode, content)            session/inject
#   ("revoke_inject", rid, mid)               session/revoke_inject
#   $/cancel_request of an inject is the core's ("cancel_req", rid)
# Agent -> client:
#   ("inject_ok", rid, mid, mode)             result {messageId}   (mode: the request's, for the judges)
#   ("inject_err", rid, code, reason, mode)   error {code, data: {reason}}   (mode: the request's)
#   ("revoke_ok", rid, mid)                   result {}            (mid: the request's)
#   ("revoke_err", rid, mid, code, reason)    error {code, data: {reason, messageId}}

_ERRORS = {-32010: "Inject precondition failed", -32800: "Request cancelled", -32002: "Resource not found"}


class InjectRequest(NamedTuple):
    rid: object
    mode: object


class InjectAccepted(NamedTuple):
    rid: object
    message_id: object
    mode: object


class InjectRejected(NamedTuple):
    rid: object
    code: object
    reason: object
    mode: object


class RevokeRequest(NamedTuple):
    rid: object
    message_id: object


class RevokeAnswered(NamedTuple):
    message_id: object
    ok: bool
    code: object = None
    reason: object = None


MESSAGES = (
    Message("inject", "client",
            lambda m: request(m[1], "session/inject", {"mode": m[2], "content": [{"type": "text", "text": m[3]}]}),
            method="session/inject", rid_at=1,
            read=lambda js, _: ("inject", js.get("id"), params_of(js).get("mode"),
                                text_of(params_of(js).get("content"))),
            record=lambda m: InjectRequest(m[1], m[2]),
            schema={"type": "object", "required": ["sessionId", "mode", "content"],
                    "properties": {"sessionId": {"type": "string"}, "mode": {"enum": ["queue", "steer"]},
                                   "content": {"type": "array"}}}),
    Message("revoke_inject", "client",
            lambda m: request(m[1], "session/revoke_inject", {"messageId": message_id(m[2])}),
            method="session/revoke_inject", rid_at=1, ids_at=(2,),
            read=lambda js, _: ("revoke_inject", js.get("id"), params_of(js).get("messageId")),
            record=lambda m: RevokeRequest(m[1], m[2]),
            schema={"type": "object", "required": ["sessionId", "messageId"],
                    "properties": {"sessionId": {"type": "string"}, "messageId": {"type": "string"}}}),
    Message("inject_ok", "agent", lambda m: result(m[1], {"messageId": message_id(m[2])} if m[2] else {}),
            answers="session/inject", rid_at=1, ids_at=(2,),
            read=lambda js, params: ("inject_ok", js.get("id"), (js.get("result") or {}).get("messageId"),
                                     (params or {}).get("mode")),
            record=lambda m: InjectAccepted(m[1], m[2], m[3]),
            schema={"type": "object", "required": ["messageId"], "properties": {"messageId": {"type": "string"}}}),
    Message("inject_err", "agent", lambda m: error(m[1], m[2], _ERRORS.get(m[2], "Error"), {"reason": m[3]}),
            answers="session/inject", error=True, rid_at=1,
            read=lambda js, params: ("inject_err", js.get("id"), error_code(js), error_reason(js),
                                     (params or {}).get("mode")),
            record=lambda m: InjectRejected(m[1], m[2], m[3], m[4])),
    Message("revoke_ok", "agent", lambda m: result(m[1], {}), answers="session/revoke_inject", rid_at=1, ids_at=(2,),
            read=lambda js, params: ("revoke_ok", js.get("id"), (params or {}).get("messageId")),
            record=lambda m: RevokeAnswered(m[2], True),
            schema={"type": "object"}),
    Message("revoke_err", "agent",
            lambda m: error(m[1], m[3], _ERRORS.get(m[3], "Error"), {"reason": m[4], "messageId": message_id(m[2])}),
            answers="session/revoke_inject", error=True, rid_at=1, ids_at=(2,),
            read=lambda js, params: ("revoke_err", js.get("id"), (params or {}).get("messageId"), error_code(js),
                                     error_reason(js)),
            record=lambda m: RevokeAnswered(m[2], False, m[3], m[4])),
)

# ---------------------------------------------------------------------------------------------------
# The clients' actions


def _sent(st: State) -> int:
    return sum(len(held) for held in st.clients)


def _revokes(st: State) -> int:
    return sum(1 for held in st.clients for h in held if h.will_revoke)


def client_inject(w: World) -> None:
    """A client sends session/inject, queue or steer (the user typed while the agent works, or not), and will
    revoke it once accepted, or will not."""
    st = w.mine
    if _sent(st) >= w.bound("injects"):
        return
    wills = (False, True) if _revokes(st) < w.bound("revokes") else (False,)
    for c in w.clients:
        if not w.connected(c):
            continue
        for mode in ("queue", "steer"):
            for will in wills:
                ch = w.change(("ClientInject", c, mode) + (("will-revoke",) if will else ()))
                rid = ch.new_request_id(c)
                ch.client_sends(c, ("inject", rid, mode, w.alphabet[0]))
                held = st.clients[c] + (Held(rid, mode, "sent", 0, 0, will),)
                ch.set_mine(st._replace(clients=replace_at(st.clients, c, held))).done()


def client_revoke(w: World) -> None:
    """A client revokes a pending inject it has not seen delivered (the revoke races delivery at the agent)."""
    st = w.mine
    for c in w.clients:
        if not w.connected(c):
            continue
        for k, h in enumerate(st.clients[c]):
            if h.status == "accepted" and h.will_revoke:
                ch = w.change(("ClientRevokeInject", c, h.mid))
                rid = ch.new_request_id(c)
                ch.client_sends(c, ("revoke_inject", rid, h.mid))
                held = replace_at(st.clients[c], k, h._replace(status="revoking", revoke_rid=rid))
                ch.set_mine(st._replace(clients=replace_at(st.clients, c, held))).done()


def client_cancel_inject(w: World) -> None:
    """A client cancels its session/inject with $/cancel_request before an answer (the core's cancel budget)."""
    if w.left("cancels") <= 0:
        return
    for c in w.clients:
        if not w.connected(c):
            continue
        for h in w.mine.clients[c]:
            if h.status == "sent":
                ch = w.change(("ClientCancelRequest", c, h.rid))
                ch.client_sends(c, ("cancel_req", h.rid)).spend("cancels").done()


def _client_receive(st: State, c: int, msg: tuple) -> State:
    """What client c learns of its injects from a message it receives."""
    held = st.clients[c]
    kind = msg[0]
    for k, h in enumerate(held):
        if kind in ("inject_ok", "inject_err") and h.rid == msg[1] and h.status == "sent":
            h = h._replace(status="accepted", mid=msg[2]) if kind == "inject_ok" else h._replace(status="rejected")
        elif kind in ("user_message", "chunk") and h.mid == msg[1] and h.status in ("accepted", "revoking"):
            h = h._replace(status="delivered")
        elif kind in ("revoke_ok", "revoke_err") and h.revoke_rid == msg[1] and h.status in ("revoking", "delivered"):
            h = h._replace(status="revoked" if kind == "revoke_ok" else "refused")
        else:
            continue
        return st._replace(clients=replace_at(st.clients, c, replace_at(held, k, h)))
    return st


# ---------------------------------------------------------------------------------------------------
# The agent's actions


def agent_receive_inject(w: World, c: int, msg: tuple) -> None:
    """The agent reads a session/inject: it holds it until it answers (accepting is a step of its own)."""
    st = w.mine
    inject = Inject(c, msg[1], msg[2], msg[3], "received", 0, False)
    w.change(("AgentReceive", c, "inject")).set_mine(st._replace(injects=st.injects + (inject,))).done()


def agent_receive_revoke(w: World, c: int, msg: tuple, **faults) -> None:
    """The agent reads a session/revoke_inject: revoke is ordered against delivery at the agent."""
    st = w.mine
    rid, mid = msg[1], msg[2]
    ch = w.change(("AgentReceive", c, "revoke_inject"))
    for i, inj in enumerate(st.injects):
        if inj.mid != mid or not mid:
            continue
        if inj.phase == "pending":
            # "If revoke wins, the pending inject is dropped."
            if not faults.get("keeps-pending"):
                ch.set_mine(st._replace(injects=replace_at(st.injects, i, inj._replace(phase="revoked"))))
            ch.send(c, ("revoke_ok", rid, mid))
        elif inj.phase in ("revoked", "cancelled") or faults.get("delivered-revoked"):
            # "If the message was already revoked and the agent still remembers the tombstone, return success."
            # (flag false: one that session/cancel cancelled will not be delivered either)
            ch.send(c, ("revoke_ok", rid, mid))
        else:
            # "If delivery wins, the agent returns -32010 ... already_delivered"
            ch.send(c, ("revoke_err", rid, mid, *faults.get("already-delivered", (-32010, "already_delivered"))))
        ch.done()
        return
    ch.send(c, ("revoke_err", rid, mid, -32002, "unknown_message_id")).done()


def _claims_cancel(w: World, c: int, msg: tuple) -> bool:
    """A $/cancel_request naming one of client c's injects is the proposal's."""
    return any(inj.cid == c and inj.rid == msg[1] for inj in w.mine.injects)


def agent_receive_cancel(w: World, c: int, msg: tuple) -> None:
    """$/cancel_request of an inject: "still applies ... before the accept response is sent"."""
    st = w.mine
    for i, inj in enumerate(st.injects):
        if inj.cid == c and inj.rid == msg[1]:
            break
    label = ("AgentReceive", c, "cancel_req")
    if inj.phase != "received":
        # answered already: "request cancellation is no longer the right tool"
        w.change(label).done()
        return
    # the agent cancels it (-32800), or goes on and answers it as it would have ("not cancelled")
    ch = w.change(label + ("cancelled",))
    ch.set_mine(st._replace(injects=replace_at(st.injects, i, inj._replace(phase="rejected"))))
    ch.send(c, ("inject_err", inj.rid, -32800, "cancelled", inj.mode)).done()
    w.change(label + ("goes-on",)).set_mine(
        st._replace(injects=replace_at(st.injects, i, inj._replace(cancel_asked=True)))).done()


def agent_answer(w: World, **faults) -> None:
    """The agent answers a received inject: accepts it for pending delivery with a fresh messageId, or, a steer
    while the session is idle, rejects it with -32010 no_running_turn. (``faults``: see ``FAULTS``.)"""
    st = w.mine
    idle = not w.working
    for i, inj in enumerate(st.injects):
        if inj.phase != "received":
            continue
        if inj.mode == "steer" and idle and not faults.get("accepts-steer-on-idle"):
            # "The agent returns -32010 with error.data.reason: "no_running_turn"."
            ch = w.change(("AgentRejectInject", i, "no-running-turn"))
            ch.set_mine(st._replace(injects=replace_at(st.injects, i, inj._replace(phase="rejected"))))
            ch.send(inj.cid, ("inject_err", inj.rid, *faults.get("no-running-turn", (-32010, "no_running_turn")),
                              inj.mode)).done()
            continue
        ch = w.change(("AgentAcceptInject", i, inj.mode))
        mid = ch.fresh_id()
        ch.set_mine(st._replace(injects=replace_at(st.injects, i, inj._replace(phase="pending", mid=mid))))
        # "The response carries the agent-assigned messageId"
        ch.send(inj.cid, ("inject_ok", inj.rid, 0 if faults.get("without-id") else mid, inj.mode)).done()


def agent_deliver(w: World, **faults) -> None:
    """The agent delivers a pending inject (emits its user_message): a steer into the running turn at a safe
    break-point (not while it waits for a permission answer, not into work a session/cancel stopped); a queued
    one, or a steer its turn ended before, once the session is idle. Per client, in the order accepted."""
    st = w.mine
    blocked = w.blocked and not faults.get("steer-while-blocked")
    working = w.working and w.agent_state in (RUNNING, REQUIRES_ACTION) and not blocked and not w.cancelling
    idle = not w.working and w.agent_state == IDLE
    deliverable = ("pending",) + faults.get("also", ())
    first: set = set()
    for i, inj in enumerate(st.injects):
        if inj.phase not in deliverable or inj.cid in first:
            continue
        first.add(inj.cid)  # "Per-controller delivery is FIFO."
        if faults.get("never-queue") and inj.mode == "queue":
            continue
        if (inj.mode == "steer" or faults.get("queue-into-work")) and working:
            into, label = "work", ("AgentDeliverInject", i, "steer")
        elif idle:
            into, label = "pending", ("AgentDeliverInject", i, inj.mode + ("-at-idle" if inj.mode == "steer" else ""))
        else:
            continue
        ch = w.change(label)
        ch.set_mine(st._replace(injects=replace_at(st.injects, i, inj._replace(phase="delivered"))))
        # "At delivery ..., the agent emits a user_message session update with the same messageId."
        ch.insert(inj.mid, inj.content, into).done()


# --- what the proposal does in the core's steps --------------------------------------------------


def _after_cancel(w: World, step, lose: bool = False, **_):
    """session/cancel: pending injects survive it (the proposal), or it cancels them (flag false: 2.4.0's reading).
    (``lose``: a fault, which loses them whatever the flag says.)"""
    if w.flag(SURVIVE) and not lose:
        return step
    st = w.mine_in(step)
    return w.with_mine(step, st._replace(injects=tuple(inj._replace(phase="cancelled") if inj.phase == "pending"
                                                       else inj for inj in st.injects)))


def _after_loss(w: World, step):
    """A lost connection (or a restart, every connection): injects not answered yet are gone with it, and the
    client no longer knows what became of its unanswered injects. Accepted ones stay committed to delivery."""
    gone = {step.action[1]} if step.action[0] == "ConnectionLost" else set(w.clients)
    st = w.mine_in(step)
    injects = tuple(inj._replace(phase="dropped") if inj.cid in gone and inj.phase == "received" else inj
                    for inj in st.injects)
    clients = tuple(tuple(h._replace(status="unknown") if c in gone and h.status == "sent" else h for h in held)
                    for c, held in enumerate(st.clients))
    return w.with_mine(step, st._replace(injects=injects, clients=clients))


# ---------------------------------------------------------------------------------------------------
# The judges (over what a participant observed: the same records from a model step and a transcript)


class _Seen(NamedTuple):
    """What one connection knows of the session's injects."""

    modes: tuple = ()  # ((messageId, mode), ...) of the injects accepted on any connection
    delivered: tuple = ()  # messageIds of injects whose live user_message came on any connection
    revoked: tuple = ()  # messageIds a revoke succeeded for, on any connection
    cancelled: tuple = ()  # messageIds pending when a session/cancel came (flag false)
    owed: tuple = ()  # messageIds accepted on this connection, not delivered, revoked or cancelled yet
    state: object = IDLE  # the state last reported on this connection (a new session is idle)


def _seen(t: _Seen, rec, mine: bool, survive: bool) -> _Seen:
    """The memory after ``rec``, for every judge below."""
    k = type(rec)
    if k is InjectAccepted and rec.message_id:
        t = t._replace(modes=sorted_tuple(t.modes + ((rec.message_id, rec.mode),)))
        return t._replace(owed=with_item(t.owed, rec.message_id)) if mine else t
    if (k is UserMessage or k is UserChunk) and not rec.replay and rec.message_id in dict(t.modes):
        mid = rec.message_id
        return t._replace(delivered=with_item(t.delivered, mid), owed=tuple(m for m in t.owed if m != mid))
    if k is RevokeAnswered and rec.ok:
        mid = rec.message_id
        return t._replace(revoked=with_item(t.revoked, mid), owed=tuple(m for m in t.owed if m != mid))
    if k is SessionCancel and not survive:
        pending = tuple(m for m, _ in t.modes if m not in t.delivered and m not in t.revoked)
        return t._replace(cancelled=sorted_tuple(tuple(set(t.cancelled) | set(pending))),
                          owed=tuple(m for m in t.owed if m not in pending))
    if mine and k is StateUpdate and isinstance(rec.state, str):
        return t._replace(state=rec.state)
    if mine and k is Closed:
        return t._replace(owed=(), state=IDLE)
    return t


def _stepper(check, survive: bool = True):
    """A per-session judge's step: the memory after the record, and what ``check(memory before, record)``
    finds wrong in a record carried on the judge's own connection."""

    def step(t: _Seen, rec, mine: bool):
        why = check(t, rec) if mine else ""
        return _seen(t, rec, mine, survive), why

    return step


def _live(rec) -> bool:
    """Whether ``rec`` is a live user_message(_chunk): a delivery, not a replay."""
    return (type(rec) is UserMessage or type(rec) is UserChunk) and not rec.replay


def _accepted_with_id(rec: InjectAccepted) -> str:
    if rec.message_id is None or rec.message_id == 0 or not isinstance(rec.message_id, (str, int)):
        return f"the session/inject result for request {rec.rid} carries no messageId"
    return ""


def _not_after_revoke(t: _Seen, rec) -> str:
    if _live(rec) and rec.message_id in t.revoked:
        return f"a user_message for {rec.message_id} after a revoke of it succeeded: no later user_message may come"
    return ""


def _delivery_wins(t: _Seen, rec) -> str:
    if type(rec) is not RevokeAnswered or rec.message_id not in t.delivered:
        return ""
    if rec.ok:
        return f"the revoke of {rec.message_id} succeeded after its user_message was emitted: delivery won"
    if rec.code != -32010:
        return f"the revoke of delivered {rec.message_id} was answered with error {rec.code!r}, not -32010"
    if rec.reason != "already_delivered":
        return f"the revoke of delivered {rec.message_id} was answered -32010 with reason {rec.reason!r}, not " \
               "already_delivered"
    return ""


def _owes_delivery(t: _Seen) -> list:
    return [(m, f"inject {m} was accepted and never delivered nor revoked") for m in t.owed]


def _not_after_cancel(t: _Seen, rec) -> str:
    if _live(rec) and rec.message_id in t.cancelled:
        return f"a user_message for {rec.message_id}, pending when session/cancel cancelled it"
    return ""


def _queue_at_idle(t: _Seen, rec) -> str:
    if _live(rec) and t.state in (RUNNING, REQUIRES_ACTION):
        if dict(t.modes).get(rec.message_id) == "queue" and rec.message_id not in t.delivered:
            return f"queued inject {rec.message_id} delivered while the session is {t.state}, before the turn's idle"
    return ""


def _steer_held(t: _Seen, rec) -> str:
    if _live(rec) and t.state == REQUIRES_ACTION:
        if dict(t.modes).get(rec.message_id) == "steer" and rec.message_id not in t.delivered:
            return f"steer {rec.message_id} delivered while the session waits for a permission answer"
    return ""


def _steer_needs_a_turn(t: _Seen, rec) -> str:
    if type(rec) is InjectAccepted and rec.mode == "steer" and t.state == IDLE:
        return f"a steer (request {rec.rid}) was accepted while the session is idle: no running turn to steer"
    if type(rec) is InjectRejected and rec.mode == "steer" and t.state == IDLE and rec.code != -32800:
        # the value the clause names: -32010, reason no_running_turn ($/cancel_request's -32800 aside)
        if rec.code != -32010 or rec.reason != "no_running_turn":
            return (f"a steer on an idle session (request {rec.rid}) was refused with {rec.code!r}, reason "
                    f"{rec.reason!r}: the agent returns -32010, reason no_running_turn")
    return ""


def _rename(t: _Seen, f) -> _Seen:
    def each(ids):
        return sorted_tuple(tuple(map(f, ids)))

    return t._replace(modes=sorted_tuple(tuple((f(m), mode) for m, mode in t.modes)), delivered=each(t.delivered),
                      revoked=each(t.revoked), cancelled=each(t.cancelled), owed=each(t.owed))


_READS = (InjectAccepted, InjectRejected, RevokeAnswered, UserMessage, UserChunk, SessionCancel, StateUpdate, Closed)


def _judge(jid: str, level: str, summary: str, clauses: tuple, witnesses: tuple, check, *, survive: bool = True,
           owes=None, when=None) -> Judge:
    return Judge(jid, level, "rfd", summary, clauses, _READS, None, witnesses, per="session", start=_Seen(),
                 step=_stepper(check, survive), rename=_rename, owes=owes, proposal=NAME, when=when,
                 join=lambda t: t._replace(owed=(), state=IDLE))


def _nothing(t, rec) -> str:
    return ""


JUDGES = (
    Judge("inject_accepted_with_message_id", "MUST", "rfd",
          "a session/inject success carries the messageId of the pending message", ("INJECT-ACCEPT-MESSAGE-ID",),
          InjectAccepted, _accepted_with_id, ("sometimes_revoke_wins",), proposal=NAME),
    _judge("revoked_inject_not_delivered", "MUST NOT",
           "no user_message for a messageId after a revoke of it succeeded",
           ("INJECT-REVOKE-WINS", "INJECT-REVOKE-SUCCESS"), ("sometimes_revoke_wins",), _not_after_revoke),
    _judge("revoke_after_delivery_refused", "MUST",
           "a revoke of an inject already delivered fails with -32010, reason already_delivered",
           ("INJECT-DELIVERY-WINS",), ("sometimes_delivery_wins",), _delivery_wins),
    _judge("accepted_inject_delivered", "MUST",
           "an accepted inject is delivered or revoked, whatever session/cancel does",
           ("INJECT-COMMIT-DELIVER", "INJECT-DELIVERY-ECHO", "INJECT-SURVIVE-CANCEL"),
           ("sometimes_queue_delivered_at_idle", "sometimes_inject_pending_at_session_cancel"), _nothing,
           owes=_owes_delivery, when=_survive),
    _judge("accepted_inject_delivered_unless_cancelled", "MUST",
           "an accepted inject is delivered, revoked or cancelled by session/cancel",
           ("INJECT-COMMIT-DELIVER", "S240-CANCEL-SCOPE"), ("sometimes_queue_delivered_at_idle",), _nothing,
           survive=False, owes=_owes_delivery, when=lambda rules: not _survive(rules)),
    _judge("cancelled_inject_not_delivered", "MUST NOT",
           "an inject pending when session/cancel came is never delivered (its 2.4.0 reading)",
           ("S240-CANCEL-SCOPE",), ("sometimes_inject_pending_at_session_cancel",), _not_after_cancel,
           survive=False, when=lambda rules: not _survive(rules)),
    _judge("queue_delivered_at_idle", "MUST", "a queued inject is delivered only when its connection was told idle",
           ("INJECT-QUEUE-AT-IDLE", "INJECT-QUEUE-ON-IDLE"), ("sometimes_queue_delivered_at_idle",), _queue_at_idle),
    _judge("steer_held_while_blocked", "MUST",
           "a steer is not delivered while the session waits for a permission answer",
           ("INJECT-STEER-HELD-PERMISSION",), ("sometimes_steer_delivered_into_work",), _steer_held),
    _judge("steer_needs_a_running_turn", "MUST",
           "a steer on an idle session is refused with -32010, reason no_running_turn",
           ("INJECT-STEER-IDLE-REJECTED", "INJECT-STEER-BREAK-POINT"),
           ("sometimes_steer_on_idle_rejected", "sometimes_steer_delivered_into_work"), _steer_needs_a_turn),
)

# ---------------------------------------------------------------------------------------------------
# The situations that must happen (each race outcome), and a rule the wire cannot show


def _injects(cfg) -> bool:
    return cfg.bound("injects") > 0


def _revoke_applies(cfg) -> bool:
    return cfg.bound("injects") > 0 and cfg.bound("revokes") > 0


def _answered(step, kind: str, code: int = 0) -> bool:
    return any(m[0] == kind and (not code or m[3 if kind == "revoke_err" else 2] == code) for _, m in step.emitted)


def _did(action: str, what: str):
    return lambda pre, step: step.action[0] == action and step.action[2] == what


def _cancels(cfg) -> bool:
    return _injects(cfg) and cfg.cancels > 0


WITNESSES = (
    sometimes(NAME, "sometimes_revoke_wins", "A revoke reaches the agent while the inject is pending: it succeeds, "
              "and the inject is never delivered.",
              lambda pre, step: _did("AgentReceive", "revoke_inject")(pre, step) and _answered(step, "revoke_ok"),
              _revoke_applies),
    sometimes(NAME, "sometimes_delivery_wins", "A revoke reaches the agent after the inject's delivery: -32010 "
              "already_delivered.", lambda pre, step: _answered(step, "revoke_err", -32010), _revoke_applies),
    sometimes(NAME, "sometimes_inject_cancelled_before_acceptance", "$/cancel_request reaches the agent before it "
              "answers a session/inject, and the inject is cancelled (-32800).",
              lambda pre, step: _answered(step, "inject_err", -32800), _cancels),
    sometimes(NAME, "sometimes_steer_on_idle_rejected", "A steer finds the session idle: -32010 no_running_turn.",
              lambda pre, step: _answered(step, "inject_err", -32010), _injects),
    sometimes(NAME, "sometimes_steer_delivered_into_work", "A steer is delivered into the running turn.",
              _did("AgentDeliverInject", "steer"), _injects),
    sometimes(NAME, "sometimes_queue_delivered_at_idle", "A queued inject is delivered once the session is idle.",
              _did("AgentDeliverInject", "queue"), _injects),
    sometimes(NAME, "sometimes_inject_pending_at_session_cancel", "session/cancel reaches the agent while an "
              "inject is pending.", lambda pre, step: _did("AgentReceive", "cancel")(pre, step)
              and any(inj.phase == "pending" for inj in ext_of(pre, State, State()).injects), _cancels),
)


@rule(NAME, "step", witnesses=("sometimes_inject_cancelled_before_acceptance",), cites=("INJECT-CANCEL-REQUEST",),
      applies=_injects)
def rejected_inject_never_delivered(pre, step):
    """An inject answered with an error (cancelled, or a steer on an idle session) is never delivered."""
    if step.action[0] != "AgentDeliverInject":
        return None
    inj = ext_of(pre, State, State()).injects[step.action[1]]
    if inj.phase in ("rejected", "dropped"):
        return f"client {inj.cid}'s session/inject {inj.rid} was delivered after it was {inj.phase}"
    return None


# ---------------------------------------------------------------------------------------------------
# Faults, each written from a clause: the proposal with one action changed, which the rule named catches


FAULTS = (
    Fault("accept-without-id", "inject_accepted_with_message_id",
          "the session/inject result carries no messageId", swap(**{"without-id": True})),
    Fault("revoke-keeps-pending", "revoked_inject_not_delivered",
          "a revoke of a pending inject succeeds and the inject stays pending (and is delivered)",
          swap(**{"keeps-pending": True})),
    Fault("revoke-after-delivery-succeeds", "revoke_after_delivery_refused",
          "a revoke of a delivered inject succeeds", swap(**{"delivered-revoked": True})),
    Fault("already-delivered-32602", "revoke_after_delivery_refused",
          "a revoke of a delivered inject fails with -32602 (the code of the proposal's revision of 2026-05-20)",
          swap(**{"already-delivered": (-32602, "already_delivered")})),
    Fault("pending-lost-at-cancel", "accepted_inject_delivered",
          "session/cancel drops pending injects although they survive it", swap(lose=True)),
    Fault("delivers-cancelled", "cancelled_inject_not_delivered",
          "an inject session/cancel cancelled is delivered anyway (flag false)",
          swap(also=("cancelled",)), flags=((SURVIVE, False),)),
    Fault("never-delivers-queue", "accepted_inject_delivered_unless_cancelled",
          "a queued inject is accepted and never delivered (flag false)", swap(**{"never-queue": True}),
          flags=((SURVIVE, False),)),
    Fault("queue-into-work", "queue_delivered_at_idle", "a queued inject is delivered into the running turn",
          swap(**{"queue-into-work": True})),
    Fault("steer-while-blocked", "steer_held_while_blocked",
          "a steer is delivered while the work waits for a permission answer",
          swap(**{"steer-while-blocked": True}),
          bounds=(("permissions", 1),)),
    Fault("accepts-steer-on-idle", "steer_needs_a_running_turn", "a steer on an idle session is accepted",
          swap(**{"accepts-steer-on-idle": True})),
    Fault("no-running-turn-32602", "steer_needs_a_running_turn",
          "a steer on an idle session is refused with -32602 invalid params",
          swap(**{"no-running-turn": (-32602, "no_running_turn")})),
    Fault("delivers-rejected", "rejected_inject_never_delivered",
          "an inject cancelled with $/cancel_request before acceptance is delivered", swap(also=("rejected",))),
)

# ---------------------------------------------------------------------------------------------------

PROPOSAL = Proposal(
    name=NAME,
    title="Mid-turn input: session/inject (queue and steer), revoke and its race with delivery",
    document=DOCUMENT,
    summary="a client injects a user message into a running session (steer: at the next break-point; queue: at "
            "idle); until the agent delivers it (emits its user_message) the client may revoke it, and revoke "
            "races delivery",
    clauses=CLAUSES,
    flags=FLAGS,
    bounds=BOUNDS,
    messages=MESSAGES,
    state=STATE,
    steps=(client_inject, client_revoke, client_cancel_inject, agent_answer, agent_deliver),
    receive={"inject": agent_receive_inject, "revoke_inject": agent_receive_revoke, "cancel_req": agent_receive_cancel},
    claims={"cancel_req": _claims_cancel},
    client_receive={kind: _client_receive for kind in ("inject_ok", "inject_err", "revoke_ok", "revoke_err",
                                                       "user_message", "chunk")},
    after={("AgentReceive", "cancel"): _after_cancel, "ConnectionLost": _after_loss, "AgentRestart": _after_loss},
    action_kinds=("ClientInject", "ClientRevokeInject", "AgentAcceptInject", "AgentRejectInject",
                  "AgentDeliverInject"),
    judges=JUDGES,
    properties=tuple(judged(j, _revoke_applies if "revoke" in j.id else _injects) for j in JUDGES)
    + WITNESSES + (rejected_inject_never_delivered,),
    why_not_judges={"rejected_inject_never_delivered":
                    "a rejected inject has no messageId: no message could name it if it were delivered"},
    members=(("default", Config(name="inject", cancels=1, down_latency=False, hook=False,
                                 extra=(("injects", 1), ("revokes", 1)))),),
    faults=FAULTS,
)
