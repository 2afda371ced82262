"""What a v1 agent did that the v2 rules do not judge but a client author should know.

ACP v1 leaves these open (no echo is required, a tool call's status is
optional, error codes are the agent's), so they are *notes*, not violations:
each is a fact about the run at its line of the v1 transcript.

* ``no-user-echo``: a prompt the agent never reported back with a
  ``user_message_chunk`` (v2 requires the echo; a bridge must make it up).
* ``http-status-as-error-code``: a ``session/prompt`` error whose code is an
  HTTP status (100-599) rather than a JSON-RPC code.
* ``permission-for-unannounced-tool-call``: a permission request for a tool
  call no ``tool_call`` update announced.
* ``tool-call-left-unfinished``: a tool call (announced, or introduced by a
  permission request) with no ``completed``/``failed`` status when the turn
  that made it was answered.
* ``prompt-ended-by-next-prompt``: a prompt answered ``cancelled`` though the
  client sent no ``session/cancel``, after the client sent another prompt.
* ``prompt-answered-after-next-prompt``: a prompt answered (not cancelled)
  after the client sent a later prompt: the agent queued or merged it.
* ``message-text-repeated``: a message's text starts over within a turn (a
  chunk of five characters or more repeats an earlier chunk of the same
  message): a retried model stream whose text the agent streamed again, which a
  client shows twice.
* ``prompt-never-answered``: a prompt still unanswered when a whole run ends
  (the agent went idle with it: merged into another turn, or dropped).
* ``prompt-answered-with-permission-pending``: a prompt answered while a
  permission request the agent sent was neither answered nor withdrawn
  (``$/cancel_request``): the client's later answer is to a finished turn.
"""

from __future__ import annotations

from .finding import Finding

__all__ = ["observe"]

_FINAL = ("completed", "failed")


def _note(rule: str, message: str, line: int) -> Finding:
    return Finding("probe", rule, "note", message, line)


class _Turns:
    """The v1 prompts of a transcript and what happened between each request and its answer."""

    def __init__(self):
        self.open: dict = {}  # request id key -> {"line", "echoed", "cancel", "later"}
        self.tools: dict = {}  # tool call id -> {"line", "status"}
        self.perms: dict = {}  # request id key -> line: the agent's permission requests not yet answered
        self.texts: dict = {}  # messageId (None: none given) -> {"chunks": text -> line, "noted"} in this turn
        self.notes: list[Finding] = []

    def client(self, n: int, msg: dict) -> None:
        method = msg.get("method")
        if method == "session/prompt" and "id" in msg:
            for turn in self.open.values():
                turn["later"] = turn["later"] or (n, msg["id"])
            self.texts = {}
            self.open[repr(msg["id"])] = {"line": n, "id": msg["id"], "echoed": False, "cancel": False, "later": None}
        elif method == "session/cancel":
            for turn in self.open.values():
                turn["cancel"] = True
        elif method is None:  # an answer to the agent's request
            self.perms.pop(repr(msg.get("id")), None)

    def agent(self, n: int, msg: dict) -> None:
        method = msg.get("method")
        if method == "session/update":
            self._update(n, (msg.get("params") or {}).get("update") or {})
        elif method == "$/cancel_request":
            self.perms.pop(repr((msg.get("params") or {}).get("requestId")), None)
        elif method == "session/request_permission":
            self.perms[repr(msg.get("id"))] = n
            call = (msg.get("params") or {}).get("toolCall") or {}
            cid = call.get("toolCallId")
            if cid is not None and cid not in self.tools:
                self.notes.append(_note("permission-for-unannounced-tool-call",
                                        f"permission asked for tool call {cid!r}, which no tool_call update announced", n))
                self.tools[cid] = {"line": n, "status": call.get("status") or "pending"}
        elif "method" not in msg and repr(msg.get("id")) in self.open:
            self._answer(n, msg, self.open.pop(repr(msg.get("id"))))

    def _update(self, n: int, update: dict) -> None:
        kind = update.get("sessionUpdate")
        if kind == "user_message_chunk":
            for turn in self.open.values():
                turn["echoed"] = True
        elif kind == "agent_message_chunk":
            self._chunk(n, update)
        elif kind in ("tool_call", "tool_call_update"):
            cid = update.get("toolCallId")
            tool = self.tools.setdefault(cid, {"line": n, "status": "pending"})
            if update.get("status"):
                tool["status"] = update["status"]

    def _chunk(self, n: int, update: dict) -> None:
        text = (update.get("content") or {}).get("text") if isinstance(update.get("content"), dict) else None
        if not isinstance(text, str) or len(text.strip()) < 5:
            return
        seen = self.texts.setdefault(update.get("messageId"), {"chunks": {}, "noted": False})
        if text in seen["chunks"] and not seen["noted"]:
            seen["noted"] = True
            self.notes.append(_note("message-text-repeated", f"the message's text starts over: this chunk repeats "
                                    f"{text[:40]!r} of line {seen['chunks'][text]}: a retried stream", n))
        seen["chunks"].setdefault(text, n)

    def _answer(self, n: int, msg: dict, turn: dict) -> None:
        pid = turn["id"]
        if not turn["echoed"]:
            self.notes.append(_note("no-user-echo", f"prompt {pid} was never reported back as a user_message_chunk",
                                    turn["line"]))
        error = msg.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if isinstance(code, int) and 100 <= code <= 599:
            self.notes.append(_note("http-status-as-error-code",
                                    f"prompt {pid} failed with error code {code}, an HTTP status, not a JSON-RPC code", n))
        for line in self.perms.values():
            self.notes.append(_note("prompt-answered-with-permission-pending", f"prompt {pid} was answered while the "
                                    f"permission request of line {line} was neither answered nor withdrawn", n))
        self.perms = {}
        stop = (msg.get("result") or {}).get("stopReason") if isinstance(msg.get("result"), dict) else None
        if turn["later"] is not None and stop is not None:
            line, later = turn["later"]
            if stop == "cancelled" and not turn["cancel"]:
                self.notes.append(_note("prompt-ended-by-next-prompt", f"prompt {pid} ended 'cancelled' without a "
                                        f"session/cancel, after prompt {later} (line {line}) was sent", n))
            elif stop != "cancelled":
                self.notes.append(_note("prompt-answered-after-next-prompt", f"prompt {pid} was answered {stop!r} "
                                        f"after prompt {later} (line {line}) was sent: queued behind or merged", n))
        if not self.open:  # the last open turn is answered: every tool call of it should be settled
            for cid, tool in self.tools.items():
                if tool["status"] not in _FINAL and not tool.get("reported"):
                    tool["reported"] = True
                    self.notes.append(_note("tool-call-left-unfinished", f"tool call {cid!r} was still "
                                            f"{tool['status']!r} when prompt {pid} was answered (line {n})",
                                            tool["line"]))


def observe(entries, partial: bool = False) -> list[Finding]:
    """The notes about a parsed v1 transcript ``[(line, entry)]`` (``partial``: a cut log, whose
    unanswered prompts may still be answered)."""
    turns = _Turns()
    for n, entry in entries:
        msg = entry.get("msg")
        if isinstance(msg, dict):
            (turns.client if entry.get("from") == "client" else turns.agent)(n, msg)
    if not partial:
        for turn in turns.open.values():
            turns.notes.append(_note("prompt-never-answered", f"prompt {turn['id']} was never answered: the run "
                                     "ended with the agent idle", turn["line"]))
    return turns.notes
