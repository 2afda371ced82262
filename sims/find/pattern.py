"""The pattern language of ``acp-lifecycle find``: a sequence of events in the labels the
scenarios and ``diff`` print, with optional negation.

    PATTERN  :=  EVENT ( "then" EVENT )*  ( "and never" EVENT ( "or" EVENT )* )*
    EVENT    :=  an action label         AgentInsert(_, _, 'queued'), ClientCancelSession, AgentBeginWork('input')
              |  a message label         session/cancel, state_update running, c0 <- error -32800,
                                         response to session/prompt: error -32602
              |  connection closes  |  the run ends

An **action label** is a step of the model as ``scenario`` prints it (``ClientSubmitPrompt(0, 'a')``):
the name alone matches every step of that name; arguments match position by position, ``_`` or
``*`` matching anything, bare words read as strings (``AgentInsert(_, _, queued)``); fewer arguments
than the step has match its first ones.

A **message label** matches a message a step sends, by the one-line summary ``diff`` prints
(``state_update idle stopReason=cancelled``, ``error id=1 code=-32800``) or by the kind ``diff``
groups by (``response to session/prompt: error -32800``): the label must occur in either as whole
words. ``c0``/``c1`` and ``->`` (a client sends) or ``<-`` (the agent sends) in front narrow it.

``then`` orders the events: each matches a step no earlier than the one before (one step may match
several, as an ``AgentBeginWork`` and the ``state_update running`` it sends; two messages of one
step only in the order the step sends them). A pattern is checked before the search: an action
whose parentheses do not close, or brackets that do not close in a message label, is refused. ``and never X``
excludes every run with a step matching X anywhere. ``;`` may stand for ``then``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PatternError", "Event", "Pattern", "parse", "ACTIONS"]

#: Every action name of the model (model/agent.py, model/clients.py, model/system.py).
ACTIONS = (
    "AgentReceive", "AgentResume", "AgentRejectPrompt", "AgentHold", "AgentReserveId", "AgentRespond",
    "AgentInsert", "AgentEcho", "AgentBeginWork", "AgentInitiateWork", "AgentToolCall", "AgentEndWork",
    "AgentRequestPermission", "AgentFailAndRetry", "AgentFailInBackground", "AgentImportMessage",
    "AgentFailWork", "AgentRestart", "ConnectionLost", "ClientSubmitPrompt", "ClientRetryPrompt",
    "ClientCancelRequest", "ClientCancelSession", "ClientAnswerPermission", "ClientResume", "ClientReceive",
)

_ANY = object()


class PatternError(ValueError):
    """A pattern that does not parse; the message is one line."""


@dataclass(frozen=True)
class Event:
    """One event of a pattern: an action (name, args), a message (conn, sender, text), a closure or the end."""

    text: str
    kind: str  # "action" | "message" | "closed" | "end"
    name: str = ""
    args: tuple = ()
    conn: int | None = None
    sender: str = ""
    words: str = ""

    def matches_action(self, action: tuple) -> bool:
        if self.kind != "action" or action[0] != self.name or len(self.args) > len(action) - 1:
            return False
        return all(a is _ANY or a == b for a, b in zip(self.args, action[1:]))

    def matches_message(self, conn: int, sender: str, texts: tuple[str, ...]) -> bool:
        if self.kind != "message" or (self.conn is not None and conn != self.conn):
            return False
        if self.sender and sender != self.sender:
            return False
        rx = _words(self.words)
        return any(rx.search(t) for t in texts)


@dataclass(frozen=True)
class Pattern:
    text: str
    events: tuple[Event, ...]
    never: tuple[Event, ...] = ()


_RX: dict[str, re.Pattern] = {}


def _words(text: str) -> re.Pattern:
    rx = _RX.get(text)
    if rx is None:
        rx = _RX[text] = re.compile(r"(?<![\w/$-])" + re.escape(text) + r"(?![\w/-])")
    return rx


def _arg(token: str):
    token = token.strip()
    if token in ("_", "*"):
        return _ANY
    if re.fullmatch(r"-?\d+", token):
        return int(token)
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    if token in ("True", "False"):
        return token == "True"
    if re.fullmatch(r"[\w./+-]+", token):
        return token
    raise PatternError(f"argument {token!r}: write a number, a quoted string, a bare word or _")


def _event(text: str) -> Event:
    text = " ".join(text.split())
    if not text:
        raise PatternError("an empty event (two separators in a row, or one at an end)")
    low = text.lower()
    if low in ("connection closes", "a connection closes"):
        return Event(text, "closed")
    if low in ("the run ends", "run ends", "end"):
        return Event(text, "end")
    m = re.fullmatch(r"([A-Z][A-Za-z]+)(?:\((.*)\))?", text)
    if m:
        name = m.group(1)
        if name not in ACTIONS:
            raise PatternError(f"unknown action {name!r}; the actions: {', '.join(ACTIONS)}")
        inner = (m.group(2) or "").strip()
        args = tuple(_arg(t) for t in inner.split(",")) if inner else ()
        return Event(text, "action", name=name, args=args)
    m = re.match(r"([A-Z][A-Za-z]+)\s*\(", text)
    if m:  # an action whose parentheses do not close, or with text after them
        what = "unknown action" if m.group(1) not in ACTIONS else "an action"
        raise PatternError(f"event {text!r}: {what} {m.group(1)!r} with arguments that do not parse; write "
                           f"Name(arg, ...) with its parentheses closed, e.g. AgentInsert(_, _, queued)")
    if not _balanced(text):
        raise PatternError(f"event {text!r}: its brackets do not close (a message label is words of a message "
                           f"summary, e.g. state_update running or c0 <- error -32800)")
    conn, sender, rest = None, "", text
    m = re.match(r"c(\d+)\s+", rest)
    if m:
        conn, rest = int(m.group(1)), rest[m.end():]
    m = re.match(r"(->|<-)\s*", rest)
    if m:
        sender, rest = ("client" if m.group(1) == "->" else "agent"), rest[m.end():]
    if rest.startswith("client sends "):
        sender, rest = "client", rest[len("client sends "):]
    if not rest:
        raise PatternError(f"event {text!r} names no message")
    return Event(text, "message", conn=conn, sender=sender, words=rest)


def _balanced(text: str) -> bool:
    """Whether the brackets of ``text`` close, each in order (quoted strings aside)."""
    stack, pairs = [], {")": "(", "]": "[", "}": "{"}
    for c in re.sub(r"'[^']*'|\"[^\"]*\"", "", text):
        if c in "([{":
            stack.append(c)
        elif c in pairs and (not stack or stack.pop() != pairs[c]):
            return False
    return not stack


def parse(text: str) -> Pattern:
    """A pattern from its text; PatternError (one line) when it does not parse."""
    if not text or not text.strip():
        raise PatternError("the pattern is empty; e.g. \"ClientCancelSession then AgentBeginWork('input')\"")
    parts = re.split(r"\s+and\s+never(?:\s+|$)", text.strip())
    seq = parts[0]
    if re.match(r"(?i)never\s", seq):
        raise PatternError("a pattern starts with an event to find; put 'and never X' after it")
    events = tuple(_event(e) for e in re.split(r"(?:^|\s+)then(?:\s+|$)|\s*;\s*", seq))
    if any(re.search(r"\s+then\s+|;", part) for part in parts[1:]):
        raise PatternError("'and never' takes events joined by 'or', not a sequence: put it after the sequence")
    never = tuple(_event(e) for part in parts[1:] for e in re.split(r"(?:^|\s+)or(?:\s+|$)", part))
    for e in events[:-1]:
        if e.kind == "end":
            raise PatternError("'the run ends' can only be the last event")
    if any(e.kind == "end" for e in never):
        raise PatternError("'and never the run ends' is not a pattern find can search (runs are finite)")
    return Pattern(text.strip(), events, never)
