"""From a transcript to the model's vocabulary: per-session projection and abstraction.

The model has one session (``docs/model.md``, section 1); a transcript may hold
several, on several connections. ``split_sessions`` projects the transcript on
each session: the lines that name it (``sessionId``), the responses to
requests that named it, the ``$/cancel_request`` notifications for such
requests, ``session/new`` and its response (the session it names), and a
connection's ``closed`` event in every session that connection took part in.
Each projection is then explained as a model run of its own. That is sound
because every rule the model checks is about one session (its prompts, message
IDs, echoes, foreground state, tool calls and permission requests); what binds
sessions together is either on the wire only (request ids per connection,
checked by the rule-based monitor) or a connection's loss, which every session
the connection took part in sees as its own ``closed`` event.

``prepare`` turns one projection into the model's message tuples
(``abstract``), numbers its connections as the model's clients, and drops the
lines the model has no vocabulary for (counting them: ``Prepared.skipped``).
Everything it abstracts away is listed, with why that is safe, in the comments
of ``prepare`` and in docs/transcripts.md (``trace --model``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from acp_lifecycle.model import VOCAB

__all__ = ["Line", "Part", "Prepared", "abstract", "prepare", "split_sessions", "symbol"]

# ---------------------------------------------------------------------------
# Abstraction: JSON-RPC -> the model's message tuples (raw ids kept)
# ---------------------------------------------------------------------------


def symbol(text) -> str:
    """The model's content symbol for a text: "/c" for a command, "a" otherwise."""
    return "/c" if isinstance(text, str) and text.startswith("/") else "a"


def _key(raw) -> str:
    return json.dumps(raw, sort_keys=True)


def _first_text(blocks) -> str:
    if isinstance(blocks, dict):
        blocks = [blocks]
    if isinstance(blocks, list):
        for b in blocks:
            if isinstance(b, dict) and isinstance(b.get("text"), str):
                return b["text"]
    return ""


def _valid_id(rid) -> bool:
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


def _obj(value) -> dict:
    return value if isinstance(value, dict) else {}


#: Requests of the agent that the model's permission request stands for: a
#: blocking request to one client. A session-scoped elicitation "follows the
#: aggregate foreground-state contract" of 2.4.0 exactly as a permission request
#: does (requires_action while it blocks the work, running when progress resumes,
#: cancelled with the work); what it asks for is outside the model's vocabulary,
#: as a permission request's operation is.
BLOCKING_REQUESTS = ("session/request_permission", "elicitation/create")


def abstract(entry: dict, request_method: str | None = None) -> tuple | None:
    """A transcript line as a model message tuple with the transcript's raw ids.

    ``("closed",)`` for a closed event; None for a message the model has no
    vocabulary for. ``request_method`` is the method of the request a response
    answers, when known (a response to ``initialize`` is then None, not
    ``("resumed", id)``).
    """
    if entry.get("event") == "closed":
        return ("closed",)
    msg = entry.get("msg")
    if not isinstance(msg, dict):
        return None
    sender = entry.get("from")
    method = msg.get("method")
    params = _obj(msg.get("params"))
    if sender == "client":
        return _client_message(msg, method, params, request_method)
    if sender != "agent":
        return None
    if method is None:
        return _agent_response(msg, request_method)
    if method in BLOCKING_REQUESTS:
        if method == "elicitation/create" and "sessionId" not in params:
            return None  # request-scoped: "do not themselves change session state"
        return ("perm", _key(msg.get("id")))
    if method == "$/cancel_request":
        return ("perm_cancel", _key(params.get("requestId")))
    if method != "session/update":
        return None
    return _agent_update(params.get("update"))


def _client_message(msg: dict, method, params: dict, request_method: str | None) -> tuple | None:
    """A client's request, notification or answer to a permission request."""
    if isinstance(method, str) and "id" in msg and not _valid_id(msg["id"]):
        # The model's clients number their requests (2.4.0: a request id is
        # a string or an integer, never null).
        return ("invalid", None, "a request id that is neither a string nor an integer")
    if method == "session/prompt":
        return ("prompt", _key(msg.get("id")), symbol(_first_text(params.get("prompt"))))
    if method == "$/cancel_request":
        return ("cancel_req", _key(params.get("requestId")))
    if method == "session/cancel":
        return ("cancel",)
    if method == "session/close":
        # 2.4.0: "The Agent MUST cancel any ongoing work related to the session
        # as if `session/cancel` was called"; what closing adds (background
        # work stopped, resources freed, nothing more on that connection after
        # the response) is handled by ``prepare``.
        return ("cancel",)
    if method == "session/resume":
        return ("resume", _key(msg.get("id")), bool(params.get("replayFrom")))
    if method is None and "id" in msg and request_method in (None,) + BLOCKING_REQUESTS:
        result = _obj(msg.get("result"))
        if request_method == "elicitation/create" or (request_method is None and "action" in result):
            # accept / decline answer the request; "cancel" is the answer to a
            # cancelled one ("The elicitation was cancelled.")
            return ("perm_ans", _key(msg.get("id")), "cancelled" if result.get("action") == "cancel" else "selected")
        if request_method is None and "outcome" not in result:
            return None
        outcome = _obj(result.get("outcome")).get("outcome")
        return ("perm_ans", _key(msg.get("id")), "cancelled" if outcome == "cancelled" else "selected")
    return None


def _agent_response(msg: dict, request_method: str | None) -> tuple | None:
    """The agent's response to a session/prompt or session/resume (others are outside the vocabulary)."""
    if "id" not in msg:
        return None
    rid = _key(msg.get("id"))
    if request_method not in (None, "session/prompt", "session/resume"):
        return None
    if isinstance(msg.get("error"), dict):
        return ("err", rid, msg["error"].get("code"))
    result = msg.get("result")
    if not isinstance(result, dict):
        return None
    if request_method == "session/prompt" and not isinstance(result.get("messageId"), str) and "stopReason" not in result:
        # "The agent MUST respond successfully once the user message has
        # been inserted" with its messageId (a string): the model's agent
        # never answers a prompt without one.
        return ("invalid", rid, "a session/prompt success without a string messageId")
    if "messageId" in result:
        return ("ok", rid, _key(result["messageId"]))
    if "stopReason" in result:
        return ("v1_prompt_result", rid, result["stopReason"])
    if request_method in (None, "session/resume"):
        return ("resumed", rid)
    return None


def _agent_update(u) -> tuple | None:
    """A session/update from the agent, by its kind."""
    if not isinstance(u, dict):
        return None
    kind = u.get("sessionUpdate")
    if kind == "user_message":
        if "content" not in u:
            return ("user_message", _key(u.get("messageId")), None)  # metadata only
        content = u.get("content")
        syms = tuple(symbol(b.get("text")) for b in content if isinstance(b, dict)) if isinstance(content, list) else ()
        return ("user_message", _key(u.get("messageId")), syms)
    if kind == "user_message_chunk":
        return ("chunk", _key(u.get("messageId")), symbol(_first_text(u.get("content"))))
    if kind == "state_update":
        err = u.get("error")
        code = err.get("code", 0) if isinstance(err, dict) else (0 if err is None else err)
        stop = u.get("stopReason") or ""
        if isinstance(stop, str) and stop.startswith("_"):
            stop = "_custom"  # the model's one custom stop reason stands for every `_` value
        if stop == "error" and isinstance(err, dict):
            # The model's failures carry one error object, -32000 (docs/model.md,
            # section 4, "Errors are codes"); what the object says is the failure's
            # own detail, and no rule reads it. An error object beside any other
            # stop reason keeps its code: the model never sends one there.
            code = VOCAB.ERR_FAILURE
        return ("state", u.get("state"), stop, code or 0)
    if kind in ("tool_call", "tool_call_update"):
        # A tool_call announces a call, pending unless it says otherwise; a
        # tool_call_update without a status only refines it ("omitted fields are
        # unchanged"): None, the model's refinement.
        status = u.get("status", "pending" if kind == "tool_call" else None)
        if status == "cancelled":
            # "The tool call was cancelled before it completed": the model's tool
            # calls end completed or failed, and a call that did not complete is
            # failed there (docs/model.md, section 5: the model gives the calls of
            # cancelled work a terminal status that says they did not complete).
            status = "failed"
        return ("tool", _key(u.get("toolCallId")), status)
    if kind == "notice":
        return ("notice",)
    if kind == "error":
        err = u.get("error")
        return ("error_update", err.get("code") if isinstance(err, dict) else None)
    return None


# ---------------------------------------------------------------------------
# Projection on sessions
# ---------------------------------------------------------------------------


@dataclass
class Part:
    """One session's projection of a transcript."""

    session: object  # the sessionId (any JSON value); None for lines that name none
    entries: list = field(default_factory=list)  # [(line number, entry), ...]
    creator: str | None = None  # label of the connection whose session/new made it


@dataclass
class Sessions:
    parts: list  # [Part, ...] in order of first appearance
    skipped: int  # lines of no session (initialize, its response, ...)
    raw: list  # line numbers of wire lines that are not JSON-RPC messages
    initialized: frozenset  # labels of connections whose `initialize` is in the log
    stray: list = field(default_factory=list)  # line numbers of responses that answer no pending request
    unanswered: list = field(default_factory=list)  # line numbers of requests still pending at the end (connection open)


def _sid_key(sid) -> str:
    return _key(sid)


def _created_sessions(entries: list[tuple[int, dict]]) -> dict[tuple, object]:
    """(label, id key) of each session/new -> the sessionId its response names. A look-ahead:
    the session is named by its response, which may come after updates for it ("Updates may
    arrive before or after this response")."""
    created: dict[tuple, object] = {}
    pending_new: dict[tuple, int] = {}
    for n, e in entries:
        msg = e.get("msg")
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        lab = str(e.get("conn"))
        try:
            k = (lab, _key(msg.get("id")))
        except (TypeError, ValueError):
            continue
        if e.get("from") == "client" and msg.get("method") == "session/new":
            pending_new[k] = n
        elif e.get("from") == "agent" and msg.get("method") is None and k in pending_new:
            sid = _obj(msg.get("result")).get("sessionId")
            if sid is not None:
                created[k] = sid
            del pending_new[k]
    return created


def split_sessions(entries: list[tuple[int, dict]]) -> Sessions:
    """The transcript projected on each session it holds (see the module docstring)."""
    labels_of: dict[str, set] = {}  # session key -> labels that took part
    parts: dict[str, Part] = {}
    requests: dict[tuple, tuple] = {}  # (label, sender, id key) -> (method, session key or None)
    skipped = 0
    raw: list[int] = []
    stray: list[int] = []
    initialized = set()
    created = _created_sessions(entries)

    def part(sid) -> Part:
        key = _sid_key(sid)
        if key not in parts:
            parts[key] = Part(sid)
            labels_of[key] = set()
        return parts[key]

    for n, e in entries:
        lab = str(e.get("conn"))
        if e.get("event") == "closed":
            for k in [k for k in requests if k[0] == lab]:
                del requests[k]  # a lost connection answers nothing more
            for key, labs in labels_of.items():
                if lab in labs:
                    parts[key].entries.append((n, e))
            continue
        msg, sender = e.get("msg"), e.get("from")
        if not isinstance(msg, dict):
            if "raw" in e:
                raw.append(n)
            skipped += 1
            continue
        method = msg.get("method")
        params = _obj(msg.get("params"))
        key = None
        idk = _id_key(msg)
        if isinstance(method, str):
            if method == "initialize":
                initialized.add(lab)
            if method == "session/new" and sender == "client":
                sid = created.get((lab, idk))
                key = None if sid is None else _sid_key(sid)
                if key is not None:
                    part(sid).creator = part(sid).creator or lab
            elif method == "$/cancel_request":
                target = requests.get((lab, sender, _key(params.get("requestId"))))
                key = target[1] if target else None
            elif "sessionId" in params:
                key = _sid_key(params["sessionId"])
                part(params["sessionId"])
            if idk is not None:
                requests[(lab, sender, idk)] = (method, key, n)
        elif idk is not None:
            other = "agent" if sender == "client" else "client"
            target = requests.pop((lab, other, idk), None)
            if target is None:
                # A response to no pending request of the other side on this
                # connection (an id of another type or value, a second response,
                # a response to one's own request): every model participant
                # answers each request it received once.
                stray.append(n)
                continue
            key = target[1]
        if key is None:
            skipped += 1
            continue
        parts[key].entries.append((n, e))
        labels_of[key].add(lab)
    unanswered = sorted(v[2] for v in requests.values())
    return Sessions([p for p in parts.values() if p.entries], skipped, raw, frozenset(initialized), stray, unanswered)


# ---------------------------------------------------------------------------
# Preparing one session's lines
# ---------------------------------------------------------------------------

_LABEL = re.compile(r"^c(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True)
class Line:
    n: int  # line number in the file
    label: str
    client: int  # model client index
    epoch: int  # ordinal of this connection among its client's connections
    sender: str  # "client" | "agent" | "event"
    msg: tuple  # abstract message


@dataclass
class Prepared:
    lines: list  # [Line, ...]: what the model must explain, in order
    clients: int  # the model's clients (connection labels cN and cN.k are client N)
    skipped: int  # lines set aside: outside the model's vocabulary, or abstracted away
    late: frozenset = frozenset()  # clients not attached when the session starts (they join by resume)
    retained: dict = field(default_factory=dict)  # raw messageId -> retained? as the replays show (``retention``)


def retention(lines: list) -> dict:
    """Which messages the replays show retained (True) or live-only (False).

    A resume with ``replayFrom`` replays every retained message and no
    live-only one ("may be absent from later replay"; docs/model.md): a
    messageId seen in a replay is retained, one the log showed before a
    replay began and absent from it is live-only. Messages no replay follows
    are not in the result (their retention is unobservable)."""
    known: set = set()
    windows: dict[str, tuple] = {}  # label -> (known at the start, seen in the replay)
    out: dict = {}

    def close(lab: str) -> None:
        before, seen = windows.pop(lab)
        for mid in before - seen:
            out.setdefault(mid, False)
        for mid in seen:
            out[mid] = True

    for ln in lines:
        k = ln.msg[0]
        if ln.sender == "client" and k == "resume" and ln.msg[2]:
            if ln.label in windows:
                close(ln.label)
            windows[ln.label] = (frozenset(known), set())
        elif ln.sender == "agent" and k in ("state", "resumed") and ln.label in windows:
            close(ln.label)
        elif ln.sender == "event" and ln.label in windows:
            windows.pop(ln.label)  # cut: what the replay would have shown is unknown
        elif k in ("user_message", "chunk"):
            known.add(ln.msg[1])
            if ln.label in windows:
                windows[ln.label][1].add(ln.msg[1])
        elif k == "ok":
            known.add(ln.msg[2])
    return out


def _is_start(replay_from) -> bool:
    return replay_from is None or (isinstance(replay_from, dict) and replay_from.get("type") == "start")


def _connections(entries) -> tuple[list[str], int, dict[str, tuple[int, int]], dict[int, str]]:
    """(labels in order of appearance, clients, label -> (client, epoch), client -> its first label).

    Labels ``cN`` and ``cN.k`` are client N's connections, in order; any other label is a
    client of its own, numbered after them."""
    labels = []
    for _, e in entries:
        lab = str(e.get("conn"))
        if lab not in labels:
            labels.append(lab)
    keys = []  # client keys: ("n", N) for cN/cN.k, ("l", label) otherwise
    for lab in labels:
        m = _LABEL.match(lab)
        k = ("n", int(m.group(1))) if m else ("l", lab)
        if k not in keys:
            keys.append(k)
    numbered = sorted(k for k in keys if k[0] == "n")
    others = [k for k in keys if k[0] == "l"]
    index = {k: i for i, k in enumerate(numbered + others)}
    conn_of: dict[str, tuple[int, int]] = {}
    per_client: dict[int, int] = {}
    first_label: dict[int, str] = {}
    for lab in labels:
        m = _LABEL.match(lab)
        c = index[("n", int(m.group(1))) if m else ("l", lab)]
        conn_of[lab] = (c, per_client.get(c, 0))
        per_client[c] = per_client.get(c, 0) + 1
        first_label.setdefault(c, lab)
    return labels, len(index), conn_of, first_label


def _id_key(msg: dict):
    try:
        return _key(msg["id"]) if "id" in msg else None
    except (TypeError, ValueError):
        return None


def _look_ahead(entries) -> tuple[dict[tuple, int], set[str]]:
    """What a line cannot tell before later lines show it: which requests are answered with an
    error ((label, requester, id key) -> code: a resume rejected before it attached anything),
    and which tool calls are background work (listed in a state_update's ``background``)."""
    errors: dict[tuple, int] = {}
    background: set[str] = set()
    for _, e in entries:
        msg = e.get("msg")
        if not isinstance(msg, dict):
            continue
        idk = _id_key(msg)
        if isinstance(msg.get("method"), str):
            u = _obj(_obj(msg.get("params")).get("update"))
            if u.get("sessionUpdate") == "state_update" and isinstance(u.get("background"), list):
                for item in u["background"]:
                    if isinstance(item, dict) and item.get("type") == "tool_call" and "toolCallId" in item:
                        background.add(_key(item["toolCallId"]))
        elif idk is not None and isinstance(msg.get("error"), dict):
            other = "agent" if e.get("from") == "client" else "client"
            errors.setdefault((str(e.get("conn")), other, idk), msg["error"].get("code"))
    return errors, background


def _resumes(e: dict) -> bool:
    return e.get("from") == "client" and _obj(e.get("msg")).get("method") == "session/resume"


def _late(entries, first_label: dict[int, str], initialized: frozenset, creator: str | None) -> set[int]:
    """The clients that join by resume (``Prepared.late``; see ``prepare``)."""
    late = set()
    for c, lab in first_label.items():
        first = next(e for _, e in entries if str(e.get("conn")) == lab)
        if _resumes(first) or (creator is not None and lab in initialized and lab != creator):
            late.add(c)
    return late


#: A client line handler's answer: set the line aside (it is counted as skipped)
_SKIP = "skip"


class _Walk:
    """The pass over one session's lines, in order: what each connection has opened, closed,
    is replaying or streaming, and was last told. ``entry`` turns one line into a ``Line``
    (or sets it aside); the per-method table ``_CLIENT`` and the per-kind table ``_AGENT``
    hold the rules that depend on what a line is."""

    def __init__(self, conn_of, errors, background, opened: set, spec: str) -> None:
        self.conn_of, self.errors, self.background, self.spec = conn_of, errors, background, spec
        self.pending: dict[tuple, str] = {}  # (label, sender, id key) -> method
        self.out: list[Line] = []
        self.skipped = 0
        self.opened = opened  # labels attached to the session (so far as the log shows)
        self.closed_at: set[str] = set()  # labels whose session/close was answered
        self.replaying: set[str] = set()  # labels between a resume with replayFrom and its snapshot
        self.streaming: dict[str, set] = {}  # label -> messageIds whose chunked stream has begun there
        self.told: dict[str, tuple] = {}  # label -> the last state_update kept there

    def entry(self, n: int, e: dict) -> None:
        lab = str(e.get("conn"))
        c, ep = self.conn_of[lab]
        if e.get("event") == "closed":
            self.out.append(Line(n, lab, c, ep, "event", ("closed",)))
            self.replaying.discard(lab)
            return
        msg, sender = e.get("msg"), e.get("from")
        request_method, idk = None, None
        if isinstance(msg, dict):
            idk = _id_key(msg)
            if isinstance(msg.get("method"), str) and idk is not None:
                self.pending[(lab, sender, idk)] = msg["method"]
            elif msg.get("method") is None and idk is not None:
                request_method = self.pending.get((lab, "agent" if sender == "client" else "client", idk))
        m = _obj(msg)
        method = m.get("method")
        early = self._agent_set_aside(lab, sender, method, request_method) if sender == "agent" else None
        if early is None and sender == "client" and method in _CLIENT:
            early = _CLIENT[method](self, lab, m, idk)
        if early == _SKIP or (early is None and request_method == "_rejected_resume"):
            self.skipped += 1
            return
        if early is not None:
            self.out.append(Line(n, lab, c, ep, sender, early))
            return
        if sender == "agent" and request_method == "session/close" and "result" in m:
            self.closed_at.add(lab)
        try:
            a = abstract(e, request_method)
        except (AttributeError, TypeError, ValueError):
            a = ("malformed",)
        if a is None or (sender == "agent" and a[0] in _AGENT and not _AGENT[a[0]](self, lab, m, a)):
            self.skipped += 1
            return
        self.out.append(Line(n, lab, c, ep, sender, a))

    def _agent_set_aside(self, lab: str, sender: str, method, request_method) -> tuple | None:
        if lab not in self.opened and not (method is None and request_method is not None):
            # The agent sends nothing for a session to a connection that neither
            # created nor resumed it ("updates_only_for_opened_sessions"): no model
            # step sends to a client that is not attached, whatever the message.
            return ("unopened",)
        if lab in self.closed_at and isinstance(method, str):
            # 2.4.0: "After the close response, the Agent sends no other messages
            # for the session on that connection." (Responses still answer their
            # requests: "Prompt responses need not precede the close response.")
            return ("after_close",)
        return None

    # -- client requests, by method ---------------------------------------------------------

    def _client_resume(self, lab: str, m: dict, idk):
        cursor = _obj(m.get("params")).get("replayFrom")
        code = self.errors.get((lab, "client", idk))
        if not _is_start(cursor) and code == -32602:
            # A cursor the model's clients never ask for, rejected as 2.4.0
            # requires: nothing happened to the session. Its response is
            # set aside too (an error to a request set aside).
            self.pending[(lab, "client", idk)] = "_rejected_resume"
            return _SKIP
        if not _is_start(cursor) and code is not None:
            # Rejected, but not as 2.4.0 requires ("MUST reject unsupported cursor types or
            # malformed cursor values with `-32602`"): the model's rejection of a resume
            # (a session the agent does not know, ``Config.reject_resume``) does not stand for it.
            return ("invalid", idk, f"a session/resume with a replayFrom cursor it does not support answered {code}, "
                                    "not -32602")
        self.opened.add(lab)
        self.streaming.pop(lab, None)
        self.told.pop(lab, None)
        if cursor is not None:
            self.replaying.add(lab)
        return None

    def _client_prompt(self, lab: str, m: dict, idk):
        if self.spec == "rfd+2.4.0" and _obj(m.get("params")).get("prompt") == []:
            return ("invalid", idk, "an empty prompt (2.4.0: \"Clients MUST NOT send an empty array.\")")
        return None

    # -- agent messages, by the kind of their abstraction: keep (True) or set aside ----------

    def _agent_tool(self, lab: str, m: dict, a: tuple) -> bool:
        if a[1] in self.background:
            # Background work is outside the model's vocabulary: a tool call the
            # agent lists in a `background` list is not foreground work, and its
            # updates, before and after the listing, are judged by the monitor's
            # background rules only ("Background activity can continue and emit
            # other session/update notifications while idle").
            return False
        # History: a resume with replayFrom replays "all retained conversation
        # history" before its snapshot, tool calls of ended work included
        # (docs/transcripts.md); the model replays user messages only.
        return lab not in self.replaying

    def _agent_state(self, lab: str, m: dict, a: tuple) -> bool:
        self.replaying.discard(lab)
        u = _obj(_obj(m.get("params")).get("update"))
        if "background" in u and self.told.get(lab) == a:
            # A repeated snapshot that carries an updated background list:
            # "A repeated state may carry updated information without another
            # state transition." The update it carries is outside the model's
            # vocabulary; the state, stop reason and error repeat what this
            # connection was last told, so no participant of the model could
            # read anything new in it.
            return False
        self.told[lab] = a
        return True

    def _agent_chunk(self, lab: str, m: dict, a: tuple) -> bool:
        seen = self.streaming.setdefault(lab, set())
        if a[1] in seen:
            # The same message streamed on: the model streams one chunk per
            # message (docs/model.md, section 4, abstraction 1: content is one
            # symbol, and every chunk rule is about whether content is appended
            # or replaced, which the first chunk already shows).
            return False
        seen.add(a[1])
        return True

    def _agent_user_message(self, lab: str, m: dict, a: tuple) -> bool:
        self.streaming.get(lab, set()).discard(a[1])  # a user_message starts the content again
        return True

    def _agent_resumed(self, lab: str, m: dict, a: tuple) -> bool:
        self.replaying.discard(lab)
        return True


_CLIENT = {"session/resume": _Walk._client_resume, "session/prompt": _Walk._client_prompt}
_AGENT = {"tool": _Walk._agent_tool, "state": _Walk._agent_state, "chunk": _Walk._agent_chunk,
          "user_message": _Walk._agent_user_message, "resumed": _Walk._agent_resumed}


def prepare(entries: list[tuple[int, dict]], initialized: frozenset = frozenset(), creator: str | None = None,
            spec: str = "rfd") -> Prepared:
    """One session's lines in the model's vocabulary.

    ``initialized``: labels whose ``initialize`` is in the log (their sessions
    are exactly those they created or resumed); ``creator``: the label whose
    ``session/new`` created this session. A client is attached when the model
    starts unless its first line is its own ``session/resume``, or the session
    was created in the log and the client's first connection was initialized in
    the log but did not create it: such a client joins by resume
    (``Prepared.late``). ``spec``: the rule set's text; under "rfd+2.4.0"
    an empty prompt is a line no model client sends ("Clients MUST NOT send
    an empty array."; the RFD does not say).

    Two passes: ``_look_ahead`` reads what later lines tell (errors, background
    work), then ``_Walk`` turns each line into a ``Line`` or sets it aside.
    """
    labels, clients, conn_of, first_label = _connections(entries)
    errors, background = _look_ahead(entries)
    late = _late(entries, first_label, initialized, creator)
    resumers = {str(e.get("conn")) for _, e in entries if _resumes(e)}
    opened = set()
    for lab in labels:
        c, ep = conn_of[lab]
        if lab in initialized and lab != creator and lab not in resumers:
            # A connection whose handshake is in the log and that neither
            # created nor resumed this session never opened it.
            continue
        if not (c in late and ep == 0):
            opened.add(lab)
    walk = _Walk(conn_of, errors, background, opened, spec)
    for n, e in entries:
        walk.entry(n, e)
    return Prepared(walk.out, clients or 1, walk.skipped, frozenset(late), retention(walk.out))
