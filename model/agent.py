"""The model agent: every agent the RFD allows.

Wherever the RFD leaves a choice (hold or insert at once, reserve an ID, retain
or not, echo before or after the response, whole message or chunk, running
before insertion, tool calls, permission requests, when work ends, failures at
any point, agent-initiated work, internal cancellation of a prompt not yet
inserted), each choice is a separate step. ``Rules`` says where a spec variant
or a seeded bug does otherwise.

Each function here appends the steps of one group of agent actions to ``out``
(``successors`` in ``system.py`` calls them in a fixed order) or returns one step.
"""

from __future__ import annotations

from itertools import product

from .clients import drop_client
from .config import Config, Rules
from .machines import FOREGROUND, REQUEST, TOOL
from . import parts as _parts
from .state import (
    ERR_CANCELLED,
    ERR_FAILURE,
    ERR_INTERNAL,
    ERR_INVALID,
    IDLE,
    NOT_INSERTED,
    REQUIRES_ACTION,
    RUNNING,
    Agent,
    Msg,
    Req,
    Step,
    System,
    Used,
    Work,
    commit,
    find_req,
    Outbox,
    replace_at,
)


def _content_id(content: str) -> int:
    # The "same content, same ID" bug: an ID derived from the content.
    return 100 + "ab/ci".index(content[0])


def _new_id(agent: Agent, rules: Rules, content: str, req: Req | None = None) -> tuple[int, int]:
    """(message id, next counter)."""
    if rules.id_scheme == "content":
        return _content_id(content), agent.next_id
    if rules.id_scheme == "jsonrpc-id" and req is not None:
        # The FAQ's "Reuse the JSON-RPC request ID": clients choose request ids.
        return req.rid, agent.next_id
    if rules.id_scheme == "client" and req is not None:
        # The FAQ's "Let the client choose the canonical message ID": each
        # client numbers its own messages.
        return 200 + sum(1 for r in agent.reqs[: agent.reqs.index(req) + 1] if r.cid == req.cid), agent.next_id
    return agent.next_id, agent.next_id + 1


def _other_id(mid: int) -> int:
    # "Another ID" for the bugs that echo or replay under a different ID.
    return mid + 50



# --- agent: receiving ----------------------------------------------------------


def agent_receive(s: System, c: int, rules: Rules, out: list[Step]) -> None:
    """The agent handles the head of client c's channel."""
    msg = s.up[c][0]
    s = s._replace(up=replace_at(s.up, c, s.up[c][1:]))
    a = s.agent
    kind = msg[0]
    label = ("AgentReceive", c, kind)
    o = Outbox(s)
    if kind == "prompt":
        req = Req(c, msg[1], msg[2], "received", 0, (), False, False, False, False)
        idx: int | None = len(a.reqs)
        a = a._replace(reqs=a.reqs + (req,))
        if rules.respond_at == "receipt":
            a = _reserve(a, idx, rules)
            a = _parts.of(rules).answer(a, idx, o, ("ok", a.reqs[idx].mid), rules)
        if rules.second_stop_reason and a.fg == IDLE and a.stop == rules.cancel_stop_reason:
            # claude-agent-acp#551: a late second stop reason for work already ended.
            o.broadcast(("state", IDLE, rules.second_stop_reason, 0))
            a = a._replace(stop=rules.second_stop_reason)
    elif kind == "cancel_req":
        idx = find_req(a, c, msg[1])
        if idx is not None:
            req = a.reqs[idx]
            if req.phase in NOT_INSERTED:
                # "$/cancel_request ... answers session/prompt with -32800 only before insertion"
                a = _parts.of(rules).reject(a, idx, o, ERR_CANCELLED, rules)
            elif rules.cancel_after_insertion and req.phase in ("inserted", "answered"):
                a = _parts.of(rules).answer(a, idx, o, ("err", ERR_CANCELLED), rules)
            # else: inserted already -- the request still succeeds with its messageId.
    elif kind == "cancel":
        _agent_cancel(s, c, a, o, rules, out)
        return
    elif kind == "perm_ans":
        w = a.work
        if w is not None and w.perm == msg[1] and not w.cancelling:
            a = a._replace(work=w._replace(perm=0))
            if a.fg == REQUIRES_ACTION:
                # "Once reported, it MUST report `running` when progress resumes"
                a = a._replace(fg=FOREGROUND[(a.fg, "unblock")])
                o.broadcast(("state", RUNNING, "", 0))
            # else: the block was never reported (``Rules.report_requires_action``):
            # the session was last reported running, and still is
        # else: a late answer for work that ended or was cancelled -- ignored
        # ("Agents SHOULD ignore responses for work that has already ended
        # rather than use them to resume it").
    elif kind == "resume":
        _agent_resume(s, c, msg, rules, out)
        return
    out.append(Step(label, commit(s, a, o), tuple(o.emitted)))


def _agent_cancel(s: System, c: int, a: Agent, o: Outbox, rules: Rules, out: list[Step]) -> None:
    """``session/cancel`` reaches the agent: stop the foreground work (and, 2.4.0, prompts not yet inserted)."""
    w = a.work
    pid = w.perm if w is not None and not w.cancelling else 0
    if w is not None and not w.cancelling:
        # 2.4.0: "MUST stop waiting for pending session/request_permission
        # requests of the cancelled work and treat them as not approved"
        a = a._replace(work=w._replace(cancelling=True, perm=0))
    if w is not None and a.pending:
        # ghost: inserted prompts whose work has not begun are neither the foreground work nor
        # "prompts not yet inserted" (``session_cancel_stops_inserted_waiting_prompt``)
        reqs = tuple(r._replace(waiting_at_session_cancel=True) if r.ever_inserted and r.mid in a.pending else r
                     for r in a.reqs)
        a = a._replace(reqs=reqs)
    if rules.spec == "rfd+2.4.0":
        # ghost: the prompts this cancel covers under the 2.4.0 text
        reqs = tuple(r._replace(session_cancel_before_insertion=True)
                     if r.phase in NOT_INSERTED and not r.session_cancel_before_insertion else r for r in a.reqs)
        a = a._replace(reqs=reqs)
    if rules.cancel_rejects_held == "must":
        # 2.4.0: "Cancels a session's foreground work and its prompts not yet inserted."
        for idx, req in enumerate(a.reqs):
            if req.phase in NOT_INSERTED:
                a = _parts.of(rules).reject(a, idx, o, ERR_CANCELLED, rules)
    label: tuple = ("AgentReceive", c, "cancel")
    holders = [cc for cc in range(len(s.clients)) if pid and _perm_client(s, cc, pid)]
    if holders and rules.cancel_permissions:
        # 2.4.0: "It SHOULD cancel each of them with `$/cancel_request`."
        o2 = Outbox(s)
        o2.down, o2.emitted = list(o.down), list(o.emitted)
        for cc in holders:
            o2.send(cc, ("perm_cancel", pid))
        out.append(Step(label, commit(s, a, o2), tuple(o2.emitted)))
        if not rules.lenient:
            return
        label = label + ("keeps-permission-request",)
        a = a._replace(work=a.work._replace(perm=pid))  # not waited for; withdrawn later (_withdraw) or never
    out.append(Step(label, commit(s, a, o), tuple(o.emitted)))


def _agent_resume(s: System, c: int, msg: tuple, rules: Rules, out: list[Step]) -> None:
    rid, replay = msg[1], msg[2]
    a0 = s.agent._replace(attached=s.agent.attached | (1 << c))
    replays = replay or rules.replay_without_replay_from
    modes: tuple = ("whole", "chunks") if replays else ("none",)
    if replays and rules.replay_mixed:
        # Each retained message whole or by chunks, independently (an agent
        # replays a message as it first sent it): every mix of the two.
        k = sum(1 for m in s.agent.conv if m.retained)
        modes += tuple(m for m in product(("whole", "chunks"), repeat=k) if len(set(m)) > 1)
    snaps: tuple = ("snapshot",) if rules.resume_snapshot == "must" else ("no-snapshot", "snapshot")
    if s.agent.fg == IDLE and s.agent.stop:
        # "Repeated or resume snapshots may carry the last stop reason for
        # context": or not.
        snaps += ("bare-snapshot",)
    for mode in modes:
        for snap in snaps:
            a = a0
            o = Outbox(s._replace(agent=a))
            if mode != "none":
                conv = list(a.conv)
                each = iter(mode) if isinstance(mode, tuple) else None
                for i, m in enumerate(conv):
                    if not m.retained:
                        continue  # live-only: "may be absent from later replay"
                    mid = m.mid if rules.replay_same_id else _other_id(m.mid)
                    token = _token(a, m, rules)
                    if (next(each) if each is not None else mode) == "whole":
                        o.send(c, ("user_message", mid, (m.content,), True, token))
                    else:
                        # "When replay reconstructs a user message from its beginning
                        # using chunks, the agent MUST first send a user_message
                        # update with content: []."
                        if rules.replay_reset:
                            o.send(c, ("user_message", mid, (), True, token))
                        o.send(c, ("chunk", mid, m.content, True))
                    if m.owed >> c & 1:
                        # The replay reports the message to c: its live echo is
                        # no longer owed there (a live echo by chunks after the
                        # replay would append the content a second time).
                        m = conv[i] = m._replace(owed=m.owed & ~(1 << c))
                    if m.kind == "command" and rules.replay_executes_commands:
                        conv[i] = m._replace(runs=m.runs + 1)
                a = a._replace(conv=tuple(conv))
            if snap != "no-snapshot":
                # 2.4.0: "The agent MUST send a current state_update after any
                # requested history replay and before this response"
                o.send(c, ("state", a.fg, a.stop if a.fg == IDLE and snap == "snapshot" else "", 0))
            o.send(c, ("resumed", rid))
            label = ("AgentResume", c, mode, snap)
            out.append(Step(label, commit(s, a, o), tuple(o.emitted)))


def _token(a: Agent, m: Msg, rules: Rules):
    if not rules.correlation_token or m.origin < 0:
        return None
    req = a.reqs[m.origin]
    return (req.cid, req.rid)



# --- agent: prompts -------------------------------------------------------------


def answer(a: Agent, idx: int, o: Outbox, answer: tuple, rules: Rules, wire: tuple | None = None) -> Agent:
    req = a.reqs[idx]
    if not rules.prompt_response:
        return a  # the FAQ's "Prompt as a notification": there is nothing to answer
    if not req.orphan:
        if wire is not None:
            o.send(req.cid, wire)
        elif answer[0] == "ok":
            if not rules.response_message_id:
                answer = ("ok", 0)  # a result without messageId: `{}`
            o.send(req.cid, ("ok", req.rid, answer[1]))
        else:
            o.send(req.cid, ("err", req.rid, answer[1]))
    return a._replace(reqs=replace_at(a.reqs, idx, req._replace(answers=req.answers + (answer,))))


def reject(a: Agent, idx: int, o: Outbox, code: int, rules: Rules) -> Agent:
    req = a.reqs[idx]
    a = a._replace(reqs=replace_at(a.reqs, idx, req._replace(phase=REQUEST[(req.phase, "reject")])))
    return _parts.of(rules).answer(a, idx, o, ("err", code), rules)


def _reserve(a: Agent, idx: int, rules: Rules) -> Agent:
    req = a.reqs[idx]
    mid, nxt = _new_id(a, rules, req.content, req)
    req = req._replace(phase=REQUEST[(req.phase, "reserve")], mid=mid)
    return a._replace(reqs=replace_at(a.reqs, idx, req), next_id=nxt, issued=tuple(sorted(a.issued + ((mid, idx),))))


def _covered(req: Req, rules: Rules) -> bool:
    """Is this prompt covered by a `session/cancel` whose rejection is still to come (``cancel_rejects_held="later"``)?"""
    return req.session_cancel_before_insertion and rules.cancel_rejects_held == "later"


def agent_prompts(s: System, cfg: Config, rules: Rules, out: list[Step]) -> None:
    a = s.agent
    for idx, req in enumerate(a.reqs):
        phase = req.phase
        if phase in NOT_INSERTED and _covered(req, rules):
            # 2.4.0: `session/cancel` "Cancels a session's foreground work and its
            # prompts not yet inserted": this one is never inserted, and its
            # answer is -32800, whenever the agent sends it.
            o = Outbox(s)
            a2 = _parts.of(rules).reject(a, idx, o, ERR_CANCELLED, rules)
            out.append(Step(("AgentRejectPrompt", idx, "cancelled"), commit(s, a2, o), tuple(o.emitted)))
        elif phase in NOT_INSERTED:
            if phase == "received" and cfg.hold:
                r = req._replace(phase=REQUEST[(phase, "hold")])
                nxt = s._replace(agent=a._replace(reqs=replace_at(a.reqs, idx, r)))
                out.append(Step(("AgentHold", idx), nxt, ()))
            if cfg.reserve and req.mid == 0:
                a2 = _reserve(a, idx, rules)
                o = Outbox(s)
                if rules.respond_at == "reserve":
                    a2 = _parts.of(rules).answer(a2, idx, o, ("ok", a2.reqs[idx].mid), rules)
                out.append(Step(("AgentReserveId", idx), commit(s, a2, o), tuple(o.emitted)))
            command = req.content.startswith("/")
            for retained in (True, False) if (command or cfg.live_only) else (True,):
                out.append(_parts.of(rules).insert(s, idx, retained, rules))
                if a.work is not None:
                    # "This RFD does not specify queueing, steering, or whether
                    # agents insert new prompts while busy": inserted now, for
                    # later work to process.
                    out.append(_parts.of(rules).insert(s, idx, retained, rules, queue=True))
            # Rejected before insertion: invalid input, a failure, or internal
            # cancellation ("a $/cancel_request or internal cancellation
            # answers session/prompt with -32800 only before insertion").
            for why, code in (("invalid", ERR_INVALID), ("cancelled", ERR_CANCELLED)):
                o = Outbox(s)
                a2 = _parts.of(rules).reject(a, idx, o, code, rules)
                out.append(Step(("AgentRejectPrompt", idx, why), commit(s, a2, o), tuple(o.emitted)))
        elif phase == "inserted" and not req.answers and rules.prompt_response and rules.protocol == "v2":
            # "The agent MUST respond successfully once the user message has been
            # inserted, without waiting for foreground processing to finish."
            o = Outbox(s)
            r = req._replace(phase=REQUEST[(phase, "respond")])
            a2 = _parts.of(rules).answer(a._replace(reqs=replace_at(a.reqs, idx, r)), idx, o, ("ok", req.mid), rules)
            out.append(Step(("AgentRespond", idx), commit(s, a2, o), tuple(o.emitted)))
    if rules.echo:
        # v1 has no whole user_message: it echoes by chunks only.
        modes: tuple = ("chunk",) if rules.protocol == "v1" else ("whole", "chunk") if cfg.chunks else ("whole",)
        if cfg.meta and rules.protocol == "v2":
            modes += ("chunk+meta",)
        for i, m in enumerate(a.conv):
            if m.owed:
                for mode in modes:
                    out.append(_parts.of(rules).echo(s, i, m, mode, rules))


def insert(s: System, idx: int, retained: bool, rules: Rules, queue: bool = False) -> Step:
    a = s.agent
    req = a.reqs[idx]
    if req.mid:
        mid, nxt_id, issued = req.mid, a.next_id, a.issued
    else:
        mid, nxt_id = _new_id(a, rules, req.content, req)
        issued = tuple(sorted(a.issued + ((mid, idx),)))
    command = req.content.startswith("/")
    msg = Msg(mid, req.content, retained, idx, "command" if command else "prompt", a.attached, int(command), a.attached)
    r = req._replace(phase=REQUEST[(req.phase, "insert")], mid=mid, ever_inserted=True)
    a = a._replace(reqs=replace_at(a.reqs, idx, r), conv=a.conv + (msg,), next_id=nxt_id, issued=issued)
    label: tuple = ("AgentInsert", idx, "retained" if retained else "live-only")
    if a.work is not None and not queue:
        # Inserted while work runs: this work takes it (steering), or, with
        # ``queue``, it waits for later work (holding it un-inserted until the
        # work ends is the other way to queue).
        a = a._replace(work=a.work._replace(inputs=a.work.inputs + (mid,)))
    else:
        a = a._replace(pending=tuple(sorted(a.pending + (mid,))))
        if queue:
            label += ("queued",)
    return Step(label, s._replace(agent=a), ())


def echo(s: System, i: int, m: Msg, mode: str, rules: Rules) -> Step:
    a = s.agent
    o = Outbox(s)
    mid = m.mid if rules.echo_same_id else _other_id(m.mid)
    if mode == "whole":
        o.broadcast(("user_message", mid, (m.content,), False, _token(a, m, rules)), m.owed)
    else:
        o.broadcast(("chunk", mid, m.content, False), m.owed)
        if mode == "chunk+meta":
            # A metadata-only update after the content: "A metadata-only update
            # does not clear content".
            o.broadcast(("user_message", mid, None, False, _token(a, m, rules)), m.owed)
    a = a._replace(conv=replace_at(a.conv, i, m._replace(owed=0)))
    return Step(("AgentEcho", m.mid, mode), commit(s, a, o), tuple(o.emitted))


# --- agent: foreground work -------------------------------------------------------


def agent_work(s: System, cfg: Config, rules: Rules, out: list[Step]) -> None:
    a = s.agent
    w = a.work
    used = s.used
    if w is None:
        if a.fg != IDLE:
            return  # only a buggy agent gets here: it dropped work without an idle
        waiting = [i for i, r in enumerate(a.reqs)
                   if r.phase in NOT_INSERTED and not r.orphan and not r.had_work_before_insertion and not _covered(r, rules)]
        if a.pending:
            out.extend(_begins(s, cfg, rules, ("AgentBeginWork", "input"), a.pending, used))
        elif waiting and cfg.hook:
            # "`running` may precede user-message insertion, for example during a
            # foreground hook. It is not acknowledgment of insertion". Once per
            # request: a hook that ran, ended and ran again adds nothing new.
            i = waiting[0]
            step = _begin(s, ("AgentBeginWork", "before-insertion"), (), used)
            a2 = step.state.agent
            a2 = a2._replace(reqs=replace_at(a2.reqs, i, a2.reqs[i]._replace(had_work_before_insertion=True)),
                             work=a2.work._replace(before_insertion_of=i + 1))
            out.append(step._replace(state=step.state._replace(agent=a2)))
        if used.agent_work < cfg.agent_work:
            # "Agent-initiated work does not require a prompt request or a
            # synthetic user message."
            out.extend(_begins(s, cfg, rules, ("AgentInitiateWork",), (), used._replace(agent_work=used.agent_work + 1)))
        return
    if (w.perm or a.fg != RUNNING) and not w.cancelling:
        return  # waiting for the permission answer (reported requires_action, or not)
    _tool_steps(s, cfg, out)
    if w.cancelling and w.perm and cfg.withdraw_permission:
        out.extend(_withdraw(s, w.perm))
    end = _parts.of(rules).end
    # No text asks for a final status of a call when work ends normally or by a
    # cancel (only failed work SHOULD fail its calls): the work may end with calls
    # left pending or running, as every published agent does after a cancel.
    open_tools = any(st not in ("completed", "failed") for _, st in w.tools)
    if w.cancelling:
        reason = rules.cancel_stop_reason
        out.append(end(s, cfg, rules, ("AgentEndWork", reason), reason))
        if open_tools:
            out.append(end(s, cfg, rules, ("AgentEndWork", reason, "tools-left"), reason, 0, "error-idle", True))
        return
    if used.perms < cfg.permissions:
        pid = used.perms + 1
        for c in _attached(a):
            for first, report in _block_modes(cfg, rules):
                o = Outbox(s)
                _block(o, c, pid, first, report)
                fg = FOREGROUND[(a.fg, "block")] if report else a.fg
                a2 = a._replace(fg=fg, work=w._replace(perm=pid))
                nxt = commit(s, a2, o)._replace(used=used._replace(perms=pid))
                label = ("AgentRequestPermission", c) + _block_tail(first, report)
                out.append(Step(label, nxt, tuple(o.emitted)))
    if not open_tools and not _awaits_response(a, rules):
        for reason in cfg.stop_reasons:
            if reason == "" and rules.spec == "rfd+2.4.0" and not rules.lenient:
                continue  # 2.4.0: "The agent SHOULD include a stop reason on that idle update."
            if rules.protocol == "v1" and reason in ("", "_custom"):
                continue  # v1: the response's stopReason is required, from a closed set
            out.append(end(s, cfg, rules, ("AgentEndWork", reason), reason))


#: How a new tool call is first reported: any status ("the first report of a call may
#: carry any status"); gemini-cli and qwen-code first report a call asked about in a
#: permission request as completed.
_FIRST_TOOL_REPORTS = (("start", "pending"), ("start-running", "in_progress"),
                       ("start-completed", "completed"), ("start-failed", "failed"))


def _tool_steps(s: System, cfg: Config, out: list[Step]) -> None:
    """Tool calls of the running (or cancelled) work: a call's next status, an update that
    only refines it (no status), a new call. Cancelled work may still report them: "The
    Agent MAY send content or tool call updates after receiving `session/cancel`, but MUST
    send them before the idle `state_update` that reports cancellation"."""
    a, used = s.agent, s.used
    w = a.work
    for k, (tid, status) in enumerate(w.tools):
        for event in ("run", "complete", "fail"):
            nxt_status = TOOL.get((status, event))
            if nxt_status is None:
                continue
            o = Outbox(s)
            o.broadcast(("tool", tid, nxt_status, False))
            w2 = w._replace(tools=replace_at(w.tools, k, (tid, nxt_status)))
            out.append(Step(("AgentToolCall", tid, event), commit(s, a._replace(work=w2), o), tuple(o.emitted)))
        if used.refinements < cfg.tool_refinements:
            # An update without a status ("omitted fields are unchanged"), or repeating the
            # call's status (opencode's `in_progress` after the approval): it changes nothing.
            for event, same in (("refine", None), ("repeat", status)):
                o = Outbox(s)
                o.broadcast(("tool", tid, same, False))
                nxt = commit(s, a, o)._replace(used=used._replace(refinements=used.refinements + 1))
                out.append(Step(("AgentToolCall", tid, event), nxt, tuple(o.emitted)))
    if used.tools < cfg.tool_calls and a.fg == RUNNING:
        tid = used.tools + 1
        # A new call is announced with any status. Cancelled work may still report one
        # ("MAY send content or tool call updates after receiving `session/cancel`"):
        # an agent processes the cancel concurrently with the work it cancels, and its
        # next update may be a call it was about to start (not while `requires_action`:
        # that would be progress without `running`).
        for event, status in _FIRST_TOOL_REPORTS:
            o = Outbox(s)
            o.broadcast(("tool", tid, status, True))
            w2 = w._replace(tools=w.tools + ((tid, status),))
            nxt = commit(s, a._replace(work=w2), o)._replace(used=used._replace(tools=tid))
            out.append(Step(("AgentToolCall", tid, event), nxt, tuple(o.emitted)))


def _withdraw(s: System, pid: int) -> list[Step]:
    """A lenient agent withdraws the permission request of cancelled work it kept at the cancel
    (``Config.withdraw_permission``). 2.4.0: it "SHOULD cancel each of them with `$/cancel_request`",
    at no set moment (the SHOULD's property reads it as the step receiving the cancel)."""
    a, steps = s.agent._replace(work=s.agent.work._replace(perm=0)), []
    for c in (c for c in range(len(s.clients)) if _perm_client(s, c, pid)):
        o = Outbox(s)
        o.send(c, ("perm_cancel", pid))
        steps.append(Step(("AgentRequestPermission", c, "withdrawn"), commit(s, a, o), tuple(o.emitted)))
    return steps


def _request_orders(cfg: Config) -> tuple[bool, ...]:
    """Whether the permission request goes before the `requires_action` that reports it.

    Neither text orders them: `requires_action` reports that "the foreground
    workflow as a whole is blocked on user action", and 2.4.0 keeps the two
    apart ("Pending permissions or elicitations alone do not imply this state
    ...  Responding to one request does not itself imply `running`"). An agent
    on the official SDK sends the request first (``Config.request_first``).
    """
    return (False, True) if cfg.request_first else (False,)


def _block_modes(cfg: Config, rules: Rules) -> list[tuple[bool, bool]]:
    """(request first, report `requires_action`) for each way the agent blocks work on a permission request.

    2.4.0: "The agent SHOULD report `requires_action` when the foreground
    workflow as a whole cannot progress without user action, including
    permissions or elicitations." The model agent does
    (``Rules.report_requires_action``); a lenient agent may also not. Without
    the report there is no order to choose.
    """
    reports = (True, False) if rules.lenient and rules.report_requires_action else (rules.report_requires_action,)
    return [(first, report) for report in reports for first in _request_orders(cfg) if report or not first]


def _block_tail(first: bool, report: bool) -> tuple:
    return (("request-first",) if first else ()) + (() if report else ("unreported",))


def _block(o: Outbox, c: int, pid: int, request_first: bool, report: bool = True) -> None:
    """Report `requires_action` to every attached client (if ``report``) and send permission request pid to client c."""
    if request_first or not report:
        o.send(c, ("perm", pid))
    if report:
        o.broadcast(("state", REQUIRES_ACTION, "", 0))
    if not request_first and report:
        o.send(c, ("perm", pid))


def _attached(a: Agent) -> list[int]:
    return [c for c in range(a.attached.bit_length()) if a.attached >> c & 1]


def _awaits_response(a: Agent, rules: Rules) -> bool:
    """Does a prompt this work took still wait for its response on a live connection?

    "The agent MUST respond successfully once the user message has been
    inserted, without waiting for foreground processing to finish": the model
    agent does not end the work normally before it has answered the prompts
    the work took (a failure or a cancellation may end it first).
    """
    if rules.protocol != "v2" or not rules.prompt_response or rules.respond_late:
        return False
    inputs = a.work.inputs
    return any(r.phase == "inserted" and not r.answers and not r.orphan and r.mid in inputs for r in a.reqs)


def _begins(s: System, cfg: Config, rules: Rules, label: tuple, inputs: tuple, used: Used) -> list[Step]:
    """Work starts running, or blocked on a permission request to one attached client.

    2.4.0: "the agent MUST report `running` when foreground work starts, or
    `requires_action` if it starts blocked on user action".
    """
    steps = [_begin(s, label, inputs, used)]
    if used.perms < cfg.permissions:
        pid = used.perms + 1
        for c in _attached(s.agent):
            for first, report in _block_modes(cfg, rules):
                tail = ("blocked", c) + _block_tail(first, report)
                steps.append(_begin(s, label + tail, inputs, used._replace(perms=pid), blocked=(c, pid, first, report)))
    return steps


def _begin(s: System, label: tuple, inputs: tuple, used: Used, blocked: tuple = ()) -> Step:
    a = s.agent
    o = Outbox(s)
    serial = a.serial + 1
    work = Work(serial, inputs, (), False, 0, 0)
    if blocked and blocked[3]:
        c, pid, first, _ = blocked
        _block(o, c, pid, first)
        fg = FOREGROUND[(a.fg, "start_blocked")]
        work = work._replace(perm=pid)
    elif blocked:
        # Starts blocked and does not say so (``Rules.report_requires_action``):
        # it reports `running`, as work that starts, then sends the request.
        c, pid, first, _ = blocked
        o.broadcast(("state", RUNNING, "", 0))
        _block(o, c, pid, first, report=False)
        fg = FOREGROUND[(a.fg, "start")]
        work = work._replace(perm=pid)
    else:
        # "the agent MUST report `running` when foreground work starts"
        o.broadcast(("state", RUNNING, "", 0))
        fg = FOREGROUND[(a.fg, "start")]
    a = a._replace(fg=fg, work=work, pending=() if inputs else a.pending, serial=serial)
    return Step(label, commit(s, a, o)._replace(used=used), tuple(o.emitted))


def end(
    s: System,
    cfg: Config,
    rules: Rules,
    label: tuple,
    reason: str,
    errcode: int = 0,
    report: str = "error-idle",
    keep_tools: bool = False,
) -> Step:
    """End the work with an idle: unfinished tools fail first, then the idle.

    ``report`` says how a failure is reported: on the idle ("error-idle", the
    RFD), or as one of the FAQ's rejected alternatives ("failed-state": a
    ``failed`` state instead of idle; "error-update": an error update, then an
    idle; "notice": an error-severity notice, then an idle).
    """
    a = s.agent
    w = a.work
    o = Outbox(s)
    tools = w.tools
    if (rules.fail_tools_before_error_idle or reason != "error") and not keep_tools:
        # "Before sending it, the Agent SHOULD give each tool call that the failed
        # work left unfinished a terminal status, using failed"
        for k, (tid, status) in enumerate(tools):
            if status not in ("completed", "failed"):
                o.broadcast(("tool", tid, TOOL[(status, "fail")], False))
    if "withdraws-permission" in label and w.perm:  # a failure ends work blocked on it: withdrawn first
        for c in (c for c in range(len(s.clients)) if _perm_client(s, c, w.perm)):
            o.send(c, ("perm_cancel", w.perm))
    ended = frozenset(t for t, _ in tools)
    stragglers: tuple = ()
    if rules.tool_update_after_idle and tools:
        stragglers = (tools[-1][0],)
    if rules.error_beside_stop_reason and reason != "error":
        errcode = ERR_INTERNAL
    if report == "failed-state":
        o.broadcast(("state", "failed", "", errcode))
    elif report == "error-update":
        o.broadcast(("error_update", errcode))
        o.broadcast(("state", IDLE, "", 0))
    elif report == "notice":
        o.broadcast(("notice",))
        o.broadcast(("state", IDLE, "", 0))
    else:
        o.broadcast(("state", IDLE, reason, errcode))
    if rules.protocol == "v1":
        # v1: "the turn ends and the Agent MUST respond to the original
        # session/prompt request with a StopReason" -- every prompt this work took.
        for idx, req in enumerate(a.reqs):
            if req.phase == "inserted" and not req.answers and req.mid in w.inputs:
                a = a._replace(reqs=replace_at(a.reqs, idx, req._replace(phase=REQUEST[(req.phase, "respond")])))
                a = _parts.of(rules).answer(a, idx, o, ("ok", req.mid), rules, wire=("v1_prompt_result", req.rid, reason))
    a = a._replace(
        fg=FOREGROUND[(a.fg, "end")],
        stop=reason,
        work=None,
        ended_tools=a.ended_tools | ended,
        stragglers=stragglers,
    )
    return Step(label, commit(s, a, o), tuple(o.emitted))


# --- agent: faults ------------------------------------------------------------------


def agent_faults(s: System, cfg: Config, rules: Rules, out: list[Step]) -> None:
    a = s.agent
    used = s.used
    if cfg.reject_resume:
        out.extend(_reject_resume(s, c) for c, up in enumerate(s.up) if up and up[0][0] == "resume")
    # A buggy agent's straggling tool update after the idle.
    for tid in a.stragglers:
        o = Outbox(s)
        o.broadcast(("tool", tid, "completed", False))
        out.append(Step(("AgentToolCall", tid, "late-update"), commit(s, a._replace(stragglers=()), o), tuple(o.emitted)))
    if used.failures < cfg.failures:
        spent = used._replace(failures=used.failures + 1)
        w = a.work
        if w is not None:
            out.extend(_fail_work(s, cfg, rules, spent))
            # "Fails, and work continues (a retried request, a failed tool): A
            # notice or a tool call with status failed; the state does not change"
            o = Outbox(s)
            o.broadcast(("notice",))
            out.append(Step(("AgentFailAndRetry",), commit(s, a, o)._replace(used=spent), tuple(o.emitted)))
        else:
            # "Background activity fails while the Agent is idle: Not a stop reason"
            o = Outbox(s)
            o.broadcast(("notice",))
            out.append(Step(("AgentFailInBackground",), commit(s, a, o)._replace(used=spent), tuple(o.emitted)))
    if used.imports < cfg.imports:
        # "Imported or non-ACP messages continue to use agent-generated message IDs
        # without a corresponding prompt response."
        mid, nxt_id = _new_id(a, rules, "i")
        m = Msg(mid, "i", True, -1, "import", a.attached, 0, a.attached)
        a2 = a._replace(conv=a.conv + (m,), next_id=nxt_id, issued=tuple(sorted(a.issued + ((mid, -1),))))
        out.append(Step(("AgentImportMessage",), s._replace(agent=a2, used=used._replace(imports=used.imports + 1)), ()))
    if used.restarts < cfg.restarts:
        out.append(_restart(s, rules))
    if used.losses < cfg.losses:
        for c, cl in enumerate(s.clients):
            if cl.connected:
                out.append(_lose(s, c))


def _reject_resume(s: System, c: int) -> Step:
    """The resume heading c's channel rejected, no one attached (``Config.reject_resume``): a session
    the agent does not know, a fault of the environment for the model's one session."""
    msg = s.up[c][0]
    s = s._replace(up=replace_at(s.up, c, s.up[c][1:]))
    o = Outbox(s)
    o.send(c, ("err", msg[1], ERR_INVALID))
    return Step(("AgentResume", c, "rejected", "no-snapshot"), commit(s, s.agent, o), tuple(o.emitted))


def _fail_work(s: System, cfg: Config, rules: Rules, spent: Used) -> list[Step]:
    """A provider failure stops the foreground work."""
    a = s.agent
    w = a.work
    if w.cancelling:
        # "Work is cancelled, even if aborting raises errors: Idle state_update
        # with stopReason: cancelled"
        step = _parts.of(rules).end(s, cfg, rules, ("AgentFailWork", "while-cancelling"), rules.abort_stop_reason,
                    ERR_FAILURE if rules.abort_stop_reason == "error" else 0)
        return [step._replace(state=step.state._replace(used=spent))]
    o = Outbox(s)
    code = ERR_FAILURE if rules.protocol == "v1" else rules.error_after_insertion
    if code:
        # v1 reports a failure as the prompt's error response ("v1's session/prompt
        # is unchanged; it already reports these failures as an error response").
        # In v2 that is the bug error-after-insertion.
        for idx, req in enumerate(a.reqs):
            if req.phase == "inserted" and not req.answers and req.mid in w.inputs:
                a = _parts.of(rules).answer(a, idx, o, ("err", code), rules)
        s = commit(s, a, o)
    if not rules.idle_after_failure:
        # Bug: the work is dropped and no idle is ever sent.
        a = a._replace(work=None, ended_tools=a.ended_tools | frozenset(t for t, _ in w.tools))
        return [Step(("AgentFailWork", "stops-work"), s._replace(agent=a, used=spent), tuple(o.emitted))]
    # "When foreground work ends because of a failure after the user message was
    # inserted, the Agent reports idle with the error stop reason and, when it
    # has one, the error" (the FAQ's rejected alternatives report it otherwise:
    # Rules.failure_report). The failure comes with details (-32000) or without:
    # "It is optional and nullable; omission and null are equivalent: the Agent
    # supplied no error details."
    steps = []
    keeps = (False, True) if rules.lenient and w.tools else (False,)
    withdraws = ((), ("withdraws-permission",)) if w.perm and cfg.withdraw_permission else ((),)
    for label, code in ((("AgentFailWork", "stops-work"), ERR_FAILURE), (("AgentFailWork", "stops-work", "no-details"), 0)):
        shown = code if rules.error_details else 0
        for keep in keeps:
            for withdraw in withdraws:
                # lenient: the SHOULD to fail unfinished tool calls first is skipped
                tail = (("tools-left",) if keep else ()) + withdraw
                step = _parts.of(rules).end(s, cfg, rules, label + tail, "error", shown, rules.failure_report, keep)
                state = step.state._replace(used=spent)
                steps.append(step._replace(state=state, emitted=tuple(o.emitted) + step.emitted))
    return steps


def _lose(s: System, c: int) -> Step:
    """Connection loss: undelivered messages are dropped both ways."""
    a = s.agent
    bit = 1 << c
    reqs = tuple(r._replace(orphan=True) if r.cid == c else r for r in a.reqs)
    conv = tuple(m._replace(owed=m.owed & ~bit, audience=m.audience & ~bit) if (m.owed | m.audience) & bit else m for m in a.conv)
    a = a._replace(reqs=reqs, conv=conv, attached=a.attached & ~bit)
    o_emitted: tuple = ()
    down = s.down
    if a.work is not None and a.work.perm and _perm_client(s, c, a.work.perm):
        # The permission request went to the lost client: the agent treats it as
        # not approved and goes on (reporting `running` if it reported the block).
        cancelled = a.work.cancelling
        a = a._replace(work=a.work._replace(perm=0))
        if a.fg == REQUIRES_ACTION and not cancelled:
            a = a._replace(fg=FOREGROUND[(a.fg, "unblock")])
            o = Outbox(s._replace(agent=a))
            o.broadcast(("state", RUNNING, "", 0))
            down, o_emitted = tuple(o.down), tuple(o.emitted)
    clients = drop_client(s, c)
    if s.down[c]:
        clients = replace_at(clients, c, clients[c]._replace(missed_messages=True))  # ghost: messages lost in transit
    nxt = s._replace(agent=a, clients=clients, up=replace_at(s.up, c, ()), down=replace_at(down, c, ()),
                     used=s.used._replace(losses=s.used.losses + 1))
    return Step(("ConnectionLost", c), nxt, o_emitted)


def _perm_client(s: System, c: int, pid: int) -> bool:
    """Did permission request pid go to client c (still queued, pending or answered)?"""
    cl = s.clients[c]
    return (
        any(p == pid for p, _ in cl.perms)
        or ("perm", pid) in s.down[c]
        or any(m[0] == "perm_ans" and m[1] == pid for m in s.up[c])
    )


def _restart(s: System, rules: Rules) -> Step:
    """The agent process restarts: live-only messages and connections are gone."""
    a = s.agent
    reqs = tuple(
        r._replace(phase=REQUEST[(r.phase, "drop")], orphan=True)
        if r.phase in NOT_INSERTED or r.phase == "inserted"
        else r._replace(orphan=True)
        for r in a.reqs
    )
    conv = tuple(m._replace(owed=0, audience=0) for m in a.conv if m.retained)
    next_id = 1 if rules.id_scheme == "restart-resets" else a.next_id
    a = Agent(IDLE, "", None, reqs, conv, (), next_id, 0, a.issued, a.ended_tools, (), a.serial)
    clients = s.clients
    for c in range(len(clients)):
        clients = drop_client(s._replace(clients=clients), c)
        if s.down[c]:
            clients = replace_at(clients, c, clients[c]._replace(missed_messages=True))  # ghost: messages lost in transit
    n = len(clients)
    nxt = s._replace(agent=a, clients=clients, up=((),) * n, down=((),) * n, used=s.used._replace(restarts=s.used.restarts + 1))
    return Step(("AgentRestart",), nxt, ())
