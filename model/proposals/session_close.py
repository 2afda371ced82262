"""session-close: ``session/close`` of the 2.4.0 schema, a feature of the spec in the shape of a proposal.

The 2.4.0 schema (``@agentclientprotocol/sdk@2.4.0``, ``schema/v2/schema.json``, ``CloseSessionRequest``)
adds ``session/close``: the agent cancels the session's work "as if ``session/cancel`` was called",
answers the prompts it keeps from being inserted with ``-32800``, sends the idle that ends the
cancelled work, then answers the close; after that it sends nothing more for the session on that
connection. The core knew it only as three rules of ``trace``; here it is what every proposal is:
its clauses, messages, the actions of a client and the agent, its judges, its witnesses and faults.
It is part of the 2.4.0 text (``spec``), so every rule set that follows that text composes it
(``rfd+2.4.0`` and the variants on it), without naming it.

Readings, said where they are made:

* The close cancels as ``session/cancel`` does under the rules composing it (``World.as_if``), and
  answers the prompts not yet inserted -32800 whatever those rules let a cancel do with them (its own
  sentence: "Closing also cancels pending `session/prompt` requests ... including held prompts"); a
  variant where a cancel leaves them to the agent (``inject-survives-cancel``) keeps that for the close.
* A client that closes stops acting in the session (no prompt, cancel, retry or resume after it);
  it still answers a permission request the agent cancels.
* The model agent closes a session that exists (the model has one): ``S240-CLOSE-MISSING-SUCCEEDS``
  is not modelled.
"""

from __future__ import annotations

from typing import NamedTuple

from ._api import (
    Bound,
    Clause,
    Closed,
    Config,
    Document,
    Fault,
    Judge,
    Left,
    Message,
    PromptError,
    PromptResult,
    Proposal,
    Request,
    Response,
    ResumeRequest,
    Sent,
    SessionCancel,
    StateSpec,
    StateUpdate,
    World,
    error,
    error_code,
    judged,
    replace_at,
    request,
    result,
    sometimes,
    swap,
)

NAME = "session-close"

DOCUMENT = Document("the v2 schema of @agentclientprotocol/sdk 2.4.0 (CloseSessionRequest)",
                    "schema/v2/schema.json of the npm package @agentclientprotocol/sdk", "2.4.0")

_CANCELS = ("The Agent MUST cancel any ongoing work as if `session/cancel` was called, stop the\n"
            "session's background work, and then free the resources associated with the session.")


def _c(cid: str, level: str, section: str, text: str, out_of_scope: str = "") -> Clause:
    return Clause(cid, NAME, level, section, text, out_of_scope)


CLAUSES = (
    _c("S240-CLOSE-CANCELS-WORK", "MUST", "ClientRequest / CloseSessionRequest", _CANCELS),
    _c("S240-CLOSE-STOPS-BACKGROUND", "MUST", "ClientRequest / CloseSessionRequest", _CANCELS,
       out_of_scope="The model has no background work."),
    _c("S240-CLOSE-SILENT-AFTER-RESPONSE", "MUST NOT", "CloseSessionRequest",
       "After the close response, the Agent\nsends no other messages for the session on that connection."),
    _c("S240-CLOSE-MISSING-SUCCEEDS", "SHOULD", "CloseSessionRequest",
       "Closing a session that does not exist or is not active SHOULD succeed, and Clients SHOULD\n"
       "treat a `-32002` response as a successful close.",
       out_of_scope="The model has one session, which exists for the whole run; and not decidable on the wire: "
                    "whether the session exists or is active on the agent is not in the messages."),
    _c("S240-CLOSE-IDLE-BEFORE-RESPONSE", "MUST", "CloseSessionRequest",
       "When closing cancels active foreground work, the Agent MUST send the final\n"
       'updates for that work and the idle `state_update` with `stopReason: "cancelled"`\n'
       "before responding successfully to `session/close`."),
    _c("S240-CLOSE-CANCELS-HELD", "MUST", "CloseSessionRequest",
       "Closing also cancels pending `session/prompt` requests whose messages have not\nbeen inserted, including "
       "held prompts."),
    _c("S240-CLOSE-HELD-ANSWERED-32800", "MUST", "CloseSessionRequest",
       "If closing prevents a prompt's user message from being inserted, the\n"
       "Agent MUST answer that request with `-32800` (Request Cancelled)."),
    _c("S240-CLOSE-INSERTED-SUCCEEDS", "MUST", "CloseSessionRequest",
       "If the message\nhas already been inserted, the Agent MUST respond successfully with its\n`messageId`.",
       out_of_scope="Not on the wire: whether a prompt's message was inserted before the close is the agent's own "
                    "state, and an inserted prompt is answered with its messageId by the core's rules."),
)

BOUNDS = (Bound("closes", (0, 2), "session/close requests all clients together may send"),)

# --- what the participants keep --------------------------------------------------------------------


class Close(NamedTuple):
    """A ``session/close`` as the agent received it."""

    cid: int
    rid: int
    phase: str  # "received" (its cancellation done, the answer to come) or "answered"
    work: int  # the foreground work it found (its id), 0 for none: it is answered once that work has ended


class State(NamedTuple):
    closes: tuple = ()  # (Close, ...)
    clients: tuple = ()  # per client: "open", "closing" (sent session/close) or "closed" (answered)


def _start(cfg: Config) -> State:
    return State((), ("open",) * cfg.clients)


STATE = StateSpec(_start, client_fields=("cid",), per_client="clients")

# --- messages. Client -> agent: ("session_close", rid) session/close. Agent -> client: ("session_closed", rid)
# its result, ("session_close_err", rid, code) an error answer (read back from a transcript; the model's agent
# closes its session)


class CloseRequest(NamedTuple):
    rid: object


class CloseAnswered(NamedTuple):
    rid: object
    ok: bool


MESSAGES = (
    Message("session_close", "client", lambda m: request(m[1], "session/close", {}), method="session/close", rid_at=1,
            read=lambda js, _: ("session_close", js.get("id")),
            # "as if session/cancel was called": the judges of a cancel read it as one too
            record=lambda m: [CloseRequest(m[1]), SessionCancel()],
            schema={"type": "object", "required": ["sessionId"], "properties": {"sessionId": {"type": "string"}}}),
    Message("session_closed", "agent", lambda m: result(m[1], {}), answers="session/close", rid_at=1, leaves_session=True,
            read=lambda js, _: ("session_closed", js.get("id")), record=lambda m: [CloseAnswered(m[1], True), Left()],
            schema={"type": "object"}),
    Message("session_close_err", "agent", lambda m: error(m[1], m[2], "Error"), answers="session/close", error=True,
            rid_at=1, read=lambda js, _: ("session_close_err", js.get("id"), error_code(js)),
            record=lambda m: CloseAnswered(m[1], False)),
)

# --- the client --------------------------------------------------------------------------------------


def client_close(w: World) -> None:
    """A client closes the session (it is done with it)."""
    st = w.mine
    if len(st.closes) + sum(1 for x in st.clients if x == "closing") >= w.bound("closes"):
        return
    for c in w.clients:
        if w.connected(c) and st.clients[c] == "open":
            ch = w.change(("ClientCloseSession", c))
            ch.client_sends(c, ("session_close", ch.new_request_id(c)))
            ch.set_mine(st._replace(clients=replace_at(st.clients, c, "closing"))).done()


def _client_receive(st: State, c: int, msg: tuple) -> State:
    return st._replace(clients=replace_at(st.clients, c, "closed")) if st.clients[c] == "closing" else st


def _quiet(w: World, step, **_):
    """A client that closed the session does nothing more in it."""
    return [] if w.mine_in(step).clients[step.action[1]] != "open" else step


# --- the agent -----------------------------------------------------------------------------------------


def agent_receive_close(w: World, c: int, msg: tuple, *, held: str = "", **_) -> None:
    """The agent reads session/close: it cancels "as if `session/cancel` was called" (the core's steps for a
    cancel), and answers the close once the work it cancelled has ended."""
    rules = w.rules.with_(cancel_rejects_held=held or "must")  # "Closing also cancels ... held prompts"
    close = Close(c, msg[1], "received", w.work_id)
    for core in w.as_if(c, ("cancel", w.work_id), rules):
        ch = w.change(("AgentReceive", c, "session_close") + core.action[3:]).then(core)
        ch.set_mine(w.mine._replace(closes=w.mine.closes + (close,))).done()


def agent_answer_close(w: World, *, early: bool = False, stays: bool = False, **_) -> None:
    """The agent answers a close once the work it found has ended (its idle sent), and the connection leaves
    the session: "After the close response, the Agent sends no other messages for the session on that
    connection." (``early``, ``stays``: faults.)"""
    st = w.mine
    for i, close in enumerate(st.closes):
        if close.phase != "received" or (close.work and close.work == w.work_id and not early):
            continue
        ch = w.change(("AgentAnswerClose", close.cid))
        ch.send(close.cid, ("session_closed", close.rid))
        if not stays:
            ch.detach(close.cid)
        ch.set_mine(st._replace(closes=replace_at(st.closes, i, close._replace(phase="answered")))).done()


# --- judges ------------------------------------------------------------------------------------------


def _after_close(state, rec):
    """state: (closed, flagged) on this view."""
    k = type(rec)
    if k is CloseAnswered and rec.ok:
        return (True, False), ""
    if k is ResumeRequest or k is Closed:
        return (False, False), ""
    if k is Sent and state[0] and not state[1]:
        return (True, True), f"{rec.kind} for the session after the session/close response"
    return state, ""


def _idle_first(state, rec):
    """state: (the view was last told of work in progress, a close of that work waits for its idle)."""
    working, waits = state
    k = type(rec)
    if k is StateUpdate:
        if rec.state in ("running", "requires_action"):
            return (True, waits), ""
        if rec.state == "idle":
            return (False, waits and rec.stop_reason not in (None, "cancelled")), ""
        return state, ""
    if k is CloseRequest:
        return (working, waits or working), ""
    if k is CloseAnswered and rec.ok and waits:
        return (working, False), "session/close of active work answered before the idle cancelled that ends it"
    if k is Closed:
        return (False, False), ""
    return state, ""


def _held_cancelled(state, rec):
    """state: (the connection's prompts not answered yet, those pending when it sent session/close), sorted."""
    pending, cut = state
    k = type(rec)
    if k is Request and rec.asker == "client" and rec.method == "session/prompt":
        return (tuple(sorted(set(pending) | {rec.rid}, key=repr)), cut), ""
    if k is CloseRequest:
        return (pending, tuple(sorted(set(cut) | set(pending), key=repr))), ""
    if k is Closed:
        return ((), ()), ""
    rid = rec.rid if k is PromptError or k is PromptResult else rec.rid if k is Response and rec.asker == "client" \
        else None
    if rid is None:
        return state, ""
    state = (tuple(r for r in pending if r != rid), cut)
    if k is PromptError and rid in cut and rec.code != -32800:
        return (state[0], tuple(r for r in cut if r != rid)), \
            f"a prompt pending at session/close is answered with error {rec.code!r}, not -32800"
    return state, ""


JUDGES = (
    Judge("nothing_after_close", "MUST NOT", "2.4.0",
          "after the session/close response, nothing more for that session on that connection",
          ("S240-CLOSE-SILENT-AFTER-RESPONSE",), (CloseAnswered, Sent, ResumeRequest, Closed), None,
          ("sometimes_close_answered",), per="view", start=(False, False), step=_after_close, proposal=NAME),
    Judge("close_ends_work_first", "MUST", "2.4.0",
          "closing active work sends its idle cancelled before the session/close response",
          ("S240-CLOSE-IDLE-BEFORE-RESPONSE", "S240-CLOSE-CANCELS-WORK"), (StateUpdate, CloseRequest, CloseAnswered,
                                                                            Closed), None,
          ("sometimes_close_cancels_work",), per="view", start=(False, False), step=_idle_first, proposal=NAME),
    Judge("close_answers_prompts_cancelled", "MUST", "2.4.0",
          "a prompt pending at session/close and answered with an error gets -32800",
          ("S240-CLOSE-HELD-ANSWERED-32800", "S240-CLOSE-CANCELS-HELD"),
          (Request, CloseRequest, PromptError, PromptResult, Response, Closed), None,
          ("sometimes_close_cancels_a_prompt",), per="connection", start=((), ()), step=_held_cancelled,
          proposal=NAME),
)


def _closes(cfg) -> bool:
    return cfg.bound("closes") > 0


WITNESSES = (
    sometimes(NAME, "sometimes_close_cancels_work", "session/close reaches the agent while foreground work runs.",
              lambda pre, step: step.action[0] == "AgentReceive" and step.action[2] == "session_close"
              and pre.agent.work is not None, _closes),
    sometimes(NAME, "sometimes_close_cancels_a_prompt", "session/close keeps a prompt from being inserted: -32800.",
              lambda pre, step: step.action[0] == "AgentReceive" and step.action[2] == "session_close"
              and any(m[0] == "err" and m[2] == -32800 for _, m in step.emitted), _closes),
    sometimes(NAME, "sometimes_close_answered", "The agent answers session/close.",
              lambda pre, step: step.action[0] == "AgentAnswerClose", _closes),
)

FAULTS = (
    Fault("answers-before-idle", "close_ends_work_first", "the close is answered before the cancelled work's idle",
          swap(early=True)),
    Fault("reports-after-close", "nothing_after_close", "the agent goes on reporting the session after the close",
          swap(stays=True)),
    Fault("held-left-to-the-agent", "close_answers_prompts_cancelled",
          "the close leaves prompts not yet inserted to the agent, which may reject one with -32602",
          swap(held="may")),
)

PROPOSAL = Proposal(
    name=NAME,
    title="session/close (the 2.4.0 schema)",
    document=DOCUMENT,
    summary="a client closes the session: the agent cancels its work as session/cancel does, answers the prompts "
            "it keeps from insertion -32800, sends the idle that ends the work, answers, and reports the session "
            "no longer on that connection",
    clauses=CLAUSES,
    bounds=BOUNDS,
    messages=MESSAGES,
    state=STATE,
    steps=(client_close, agent_answer_close),
    receive={"session_close": agent_receive_close},
    client_receive={"session_closed": _client_receive},
    after={name: _quiet for name in ("ClientSubmitPrompt", "ClientRetryPrompt", "ClientCancelRequest",
                                     "ClientCancelSession", "ClientResume")},
    action_kinds=("ClientCloseSession", "AgentAnswerClose"),
    judges=JUDGES,
    properties=tuple(judged(j, _closes) for j in JUDGES) + WITNESSES,
    members=(("default", Config(name="close", agent_work=1, down_latency=False, hook=False,
                                extra=(("closes", 1),))),),
    faults=FAULTS,
    spec="rfd+2.4.0",
)
