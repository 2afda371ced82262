"""The model clients: what a correct client keeps and does.

A correct client keeps what the RFD says a client keeps: its submissions and
their (request id -> messageId) association, a view of the conversation with
optimistic entries for its pending submissions, and the last foreground state
it saw. Message updates follow the 2.4.0 upsert rules: ``content`` replaces
(``[]`` clears), chunks append. ``Rules`` says where a seeded client bug does
otherwise.
"""

from __future__ import annotations

from .config import Config, Rules
from .machines import SUBMISSION
from .state import IDLE, REQUIRES_ACTION, RUNNING, Client, Step, Sub, System, Used, find_sub, replace_at


def client_receive(s: System, c: int, cl: Client, msg: tuple, rules: Rules) -> Client:
    """A client handles the head of its channel (what a correct client keeps)."""
    kind = msg[0]
    if kind in ("ok", "v1_prompt_result", "err"):
        return _client_response(cl, msg, rules)
    if kind == "user_message" or kind == "chunk":
        mid = msg[1]
        cl = _associate_from_echo(c, cl, msg, rules)
        view = cl.view
        for i, (key, content, opt) in enumerate(view):
            if key == mid:
                if kind == "user_message":
                    if msg[2] is None:
                        # "an omitted field leaves existing message content unchanged"
                        return cl
                    new = msg[2]  # replaces; () clears
                else:
                    # "the agent's content stream is authoritative": a chunk on
                    # the optimistic copy replaces it
                    new = (msg[2],) if opt else content + (msg[2],)
                return cl._replace(view=replace_at(view, i, (mid, new, False)))
        # "For a new `messageId`, omitted `content` starts empty."
        new = (msg[2] or ()) if kind == "user_message" else (msg[2],)
        return cl._replace(view=tuple(sorted(view + ((mid, new, False),))))
    if kind == "state":
        if msg[1] not in (IDLE, RUNNING, REQUIRES_ACTION):
            return cl  # a client that predates a new state value cannot read it
        if msg[1] == IDLE and rules.client_idle_completes:
            # claude-agent-acp#480: the next idle taken as completion of the
            # client's own prompts. A correct client draws no such conclusion:
            # "state_update remains session-scoped".
            done = cl.done + tuple(
                sub.rid for sub in cl.subs if sub.status in ("sent", "acknowledged") and sub.rid not in cl.done
            )
            return cl._replace(fg=msg[1], done=done)
        return cl._replace(fg=msg[1])
    if kind == "perm":
        return cl._replace(perms=cl.perms + ((msg[1], "open"),))
    if kind == "perm_cancel":
        # 2.4.0: "The client answers a cancelled request with the `cancelled`
        # outcome." (An answered request is no longer held: "Receivers MUST
        # ignore this notification for an unknown or already-answered request ID".)
        perms = tuple((p, "cancelled") if p == msg[1] else (p, st) for p, st in cl.perms)
        return cl._replace(perms=perms)
    if kind == "resumed":
        return cl._replace(resuming=0, replayed=cl.resuming == 2)
    return cl  # tool, notice: nothing a lifecycle rule reads


def _client_response(cl: Client, msg: tuple, rules: Rules) -> Client:
    """A client handles the response to one of its prompts: ``ok`` (with the prompt's
    messageId), ``v1_prompt_result`` or ``err``."""
    kind = msg[0]
    j = find_sub(cl, msg[1])
    if j is None and kind == "err" and cl.resuming:
        # its session/resume rejected (``Config.reject_resume``): resumed nothing, it may try again
        return cl._replace(resuming=0)
    if j is None or cl.subs[j].status != "sent":
        return cl  # a second response: the client keeps the first
    if kind == "v1_prompt_result":
        # v1: the response ends the turn and carries no messageId to associate.
        sub = cl.subs[j]._replace(status=SUBMISSION[("sent", "acknowledge")])
        return cl._replace(subs=replace_at(cl.subs, j, sub))
    if kind == "err":
        sub = cl.subs[j]._replace(status=SUBMISSION[("sent", "reject")])
        view = tuple(e for e in cl.view if e[0] != -sub.rid)
        return cl._replace(subs=replace_at(cl.subs, j, sub), view=view)
    sub = cl.subs[j]
    mid = msg[2] if sub.mid == 0 else sub.mid
    sub = sub._replace(status=SUBMISSION[("sent", "acknowledge")], mid=mid)
    if not mid:
        # a result without messageId, and no echo associated yet: the echo will
        return cl._replace(subs=replace_at(cl.subs, j, sub))
    view = cl.view
    keys = [e[0] for e in view]
    local = keys.index(-sub.rid) if -sub.rid in keys else None
    if local is not None:
        if mid in keys and rules.client_reconciles:
            # "reconciling with an already-received message rather than
            # creating a second canonical message"
            view = view[:local] + view[local + 1 :]
        elif mid not in keys:
            # The optimistic copy now stands for message `mid` until the
            # agent's content arrives ("the agent's content stream is authoritative").
            view = tuple(sorted(replace_at(view, local, (mid, view[local][1], True))))
    return cl._replace(subs=replace_at(cl.subs, j, sub), view=view)


def _associate_from_echo(c: int, cl: Client, msg: tuple, rules: Rules) -> Client:
    """Associations a client makes from an echo (correct clients: only by token)."""
    mid = msg[1]
    if any(sub.mid == mid for sub in cl.subs):
        return cl
    if msg[0] == "user_message" and msg[4] is not None and rules.correlation_token:
        # The FAQ's client-generated correlation token, carried by the user
        # message: only the client that made the token recognises it.
        if msg[4][0] != c:
            return cl
        j = find_sub(cl, msg[4][1])
        if j is not None and cl.subs[j].mid == 0:
            return cl._replace(subs=replace_at(cl.subs, j, cl.subs[j]._replace(mid=mid)))
        return cl
    how = rules.client_associates_by
    if how == "response":
        return cl
    content = msg[2][0] if msg[0] == "user_message" and msg[2] else msg[2] if msg[0] == "chunk" else None
    for j, sub in enumerate(cl.subs):
        # acknowledged without an ID: the result carried none (``Rules.response_message_id``)
        took = ("sent", "unknown") if rules.response_message_id else ("sent", "unknown", "acknowledged")
        if sub.mid == 0 and sub.status in took:
            if how == "order" or sub.content == content:
                cl = cl._replace(subs=replace_at(cl.subs, j, sub._replace(mid=mid)))
                if sub.status == "acknowledged" and rules.client_reconciles:
                    # the echo now stands for the optimistic copy
                    cl = cl._replace(view=tuple(e for e in cl.view if e[0] != -sub.rid))
                return cl
    return cl



def drop_client(s: System, c: int) -> tuple:
    """What losing client c's connection does to the client."""
    cl = s.clients[c]
    subs = tuple(
        sub._replace(status=SUBMISSION[("sent", "lose")]) if sub.status == "sent" else sub for sub in cl.subs
    )
    return replace_at(s.clients, c, cl._replace(connected=False, resuming=0, replayed=False, subs=subs, perms=()))



# --- clients ---------------------------------------------------------------------------


def clients(s: System, cfg: Config, rules: Rules, out: list[Step]) -> None:
    used = s.used
    a = s.agent
    room = not cfg.total_prompts or sum(cl.submitted for cl in s.clients) < cfg.total_prompts
    for c, cl in enumerate(s.clients):
        if cl.resuming:
            continue
        if used.resumes < cfg.resumes:
            # A client resumes after losing its connection, or on the connection
            # it still has (a resume while connected, for example to replay).
            for replay in (False, True):
                rid = cl.next_rid
                cl2 = cl._replace(connected=True, resuming=2 if replay else 1, next_rid=rid + 1)
                up = s.up[c] + (("resume", rid, replay),) if cl.connected else (("resume", rid, replay),)
                nxt = s._replace(
                    clients=replace_at(s.clients, c, cl2),
                    up=replace_at(s.up, c, up),
                    used=used._replace(resumes=used.resumes + 1),
                )
                out.append(Step(("ClientResume", c, "replay" if replay else "no-replay"), nxt, ()))
        if not cl.connected:
            continue
        if cl.submitted < cfg.prompts and room:
            for content in cfg.alphabet:
                out.append(_submit(s, c, cl, content, 0, cl.submitted + 1, used))
        if used.retries < cfg.retries:
            for sub in cl.subs:
                if sub.status == "unknown" and not any(x.retry_of == sub.rid for x in cl.subs):
                    # "Clients must not ... assume retrying cannot create a second submission."
                    out.append(_submit(s, c, cl, sub.content, sub.rid, cl.submitted, used._replace(retries=used.retries + 1)))
        if used.cancels < cfg.cancels:
            spent = used._replace(cancels=used.cancels + 1)
            for sub in cl.subs:
                if sub.status == "sent":
                    nxt = s._replace(up=replace_at(s.up, c, s.up[c] + (("cancel_req", sub.rid),)), used=spent)
                    out.append(Step(("ClientCancelRequest", c, sub.rid), nxt, ()))
            if cl.fg != IDLE or any(sub.status == "sent" for sub in cl.subs) or cfg.idle_cancel:
                serial = a.work.serial if a.work is not None else 0
                # The user stops the work instead of answering its permission
                # request: the client leaves the request open until the agent
                # cancels it ("The client answers a request the agent cancels
                # with `$/cancel_request` with this outcome").
                # Or it answers them `cancelled` at once: 2.4.0, "The client MAY also send it
                # without waiting for `$/cancel_request`" (v1: "MUST respond to all pending
                # session/request_permission requests with the cancelled outcome").
                waits = ("ignored",) + (("cancelled",) if any(st == "open" for _, st in cl.perms) else ())
                for wait in waits:
                    perms = tuple((p, wait if st == "open" else st) for p, st in cl.perms)
                    nxt = s._replace(clients=replace_at(s.clients, c, cl._replace(perms=perms)),
                                     up=replace_at(s.up, c, s.up[c] + (("cancel", serial),)), used=spent)
                    label = ("ClientCancelSession", c) + (("answer-cancelled",) if wait == "cancelled" else ())
                    out.append(Step(label, nxt, ()))
        for k, (pid, st) in enumerate(cl.perms):
            if st == "ignored":
                continue  # the user stopped the work instead; only a $/cancel_request brings an answer
            outcome = "cancelled" if st == "cancelled" else "selected"
            cl2 = cl._replace(perms=cl.perms[:k] + cl.perms[k + 1 :])
            up = s.up[c] + (("perm_ans", pid, outcome),)
            out.append(Step(("ClientAnswerPermission", c, pid), s._replace(clients=replace_at(s.clients, c, cl2), up=replace_at(s.up, c, up)), ()))


def _submit(s: System, c: int, cl: Client, content: str, retry_of: int, submitted: int, used: Used) -> Step:
    rid = cl.next_rid
    sub = Sub(rid, content, "sent", 0, retry_of)
    cl2 = cl._replace(
        subs=cl.subs + (sub,),
        view=tuple(sorted(cl.view + ((-rid, (content,), True),))),
        next_rid=rid + 1,
        submitted=submitted,
    )
    nxt = s._replace(
        clients=replace_at(s.clients, c, cl2), up=replace_at(s.up, c, s.up[c] + (("prompt", rid, content),)), used=used
    )
    label = ("ClientRetryPrompt", c, retry_of) if retry_of else ("ClientSubmitPrompt", c, content)
    return Step(label, nxt, ())
