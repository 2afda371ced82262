"""JSON-RPC transcripts: the format, parsing it, exporting model traces, checking.

Format (docs/transcripts.md): JSON Lines, one object per line,
``{"conn": LABEL, "from": "client" | "agent", "msg": <JSON-RPC message>}``, in
the order observed at the agent, all connections of one agent in one file.
Blank lines are allowed, and a UTF-8 byte order mark before the first line.
A tool that knows a connection closed may write ``{"conn": LABEL, "event":
"closed"}``; a recorder that met a wire line that is not JSON writes
``{"conn": LABEL, "from": ..., "raw": "<the line>"}``; a line that is JSON but not one
message object (``[]``, ``"str"``, a batch) is recorded as it came, ``"msg": [...]``, and
reported under ``wire_message_is_json``, not refused. A transcript may start
at any point; ``initialize`` may be absent (v2 is assumed).

Numbers are read exactly: integers of any size as Python ints, numbers with a
fraction or exponent as ``RawFloat`` (a float that keeps its literal), so that
request ids ``1``, ``1.0`` and ``"1"`` stay three ids.

``check_transcript`` applies the rules of ``model/monitor/`` (the same
definitions judge model runs and real transcripts). Findings name the rule
(its clause and quoted sentence), a severity (``violation`` for a MUST,
``warning`` for a SHOULD, or for a 2.4.0 rule under ``--rules rfd``) and the
line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from acp_lifecycle.model.monitor import DEFAULT_RULES, RULES, V1_STOP_REASONS, Finding, Monitor, RawFloat
from acp_lifecycle.model.wire import agent_message, client_message

__all__ = [
    "Finding",
    "TranscriptError",
    "RULES",
    "V1_STOP_REASONS",
    "check_transcript",
    "dumps",
    "monitor",
    "export",
    "parse",
    "parse_text",
    "read",
    "Reader",
]


class TranscriptError(ValueError):
    """The transcript is unusable (not JSON, a line without msg, a missing file); one line."""


# ---------------------------------------------------------------------------
# Export: a model trace as the transcript the agent would log
# ---------------------------------------------------------------------------


def export(trace) -> list[dict]:
    """The transcript of a model trace, as observed at the agent.

    A client's message appears when the agent handles it; what the agent sends
    appears when it sends it (broadcasts once per connection); a lost
    connection or a restart closes connections. Client ``c``'s connections are
    labelled ``c0``, ``c0.1``, ``c0.2``, ... in the order they open.
    """
    lines: list[dict] = []
    epoch: dict[int, int] = {}

    def label(c: int) -> str:
        e = epoch.get(c, 0)
        return f"c{c}" if e == 0 else f"c{c}.{e}"

    for pre, step in trace:
        name = step.action[0]
        if name == "ClientResume" and not pre.clients[step.action[1]].connected:
            epoch[step.action[1]] = epoch.get(step.action[1], 0) + 1  # a resume on a new connection
        elif name in ("AgentReceive", "AgentResume"):
            c = step.action[1]
            lines.append({"conn": label(c), "from": "client", "msg": client_message(pre.up[c][0])})
        elif name == "ConnectionLost":
            lines.append({"conn": label(step.action[1]), "event": "closed"})
        elif name == "AgentRestart":
            for c, cl in enumerate(pre.clients):
                if cl.connected:
                    lines.append({"conn": label(c), "event": "closed"})
        for c, msg in step.emitted:
            lines.append({"conn": label(c), "from": "agent", "msg": agent_message(msg)})
    return lines


def dumps(lines: list[dict]) -> str:
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


class Reader:
    """The entries of a transcript file, read one line at a time (memory does not grow
    with the file): iterate for ``(line number, entry)``; TranscriptError (one line) at
    the first unusable line, after the entries before it.

    ``plain`` says whether the entry last yielded holds only plain JSON values: no
    number with a fraction or exponent (a ``RawFloat``), which a compiled schema
    validator does not read (``sims.wire.schema_compiled``)."""

    def __init__(self, path):
        self.path = path
        self.plain = True
        self._floats = 0
        self._decoder = json.JSONDecoder(parse_float=self._float)

    def _float(self, literal: str) -> RawFloat:
        self._floats += 1
        return RawFloat(literal)

    def __iter__(self) -> Iterator[tuple[int, dict]]:
        path = self.path
        try:
            f = open(path, "rb")  # noqa: SIM115 - closed by the `with` below; open's own errors are told apart here
        except FileNotFoundError:
            raise TranscriptError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise TranscriptError(f"{path}: is a directory") from None
        except OSError as e:
            raise TranscriptError(f"{path}: cannot read: {e.strerror}") from None
        # (an exception of the code consuming the entries is raised there, not here: only reading is caught)
        try:
            with f:
                offset = 0
                for n, raw in enumerate(f, 1):
                    try:
                        text = raw.decode("utf-8")
                    except UnicodeDecodeError as e:
                        raise TranscriptError(f"{path}: not UTF-8 text (byte {offset + e.start})") from None
                    offset += len(raw)
                    if n == 1:
                        text = text.removeprefix("\ufeff")  # a byte order mark, as some editors on Windows write
                    floats = self._floats
                    entry = _entry(text.removesuffix("\n").removesuffix("\r"), n, path, self._decoder)
                    if entry is not None:
                        self.plain = self._floats == floats
                        yield n, entry
        except OSError as e:  # EISDIR on some systems, EIO
            raise TranscriptError(f"{path}: cannot read: {e.strerror}") from None


def read(path) -> Iterator[tuple[int, dict]]:
    """``(line number, entry)`` for each line of the file, one line at a time (``Reader``)."""
    return iter(Reader(path))


def parse(path: Path) -> list[tuple[int, dict]]:
    """``[(line number, entry), ...]``; TranscriptError (one line) for an unusable file."""
    return list(read(path))


#: One decoder for every line (``json.loads`` with an option builds a new one per call).
_DECODER = json.JSONDecoder(parse_float=RawFloat)


def loads(text: str):
    """One JSON value, numbers exactly as written (see the module docstring)."""
    return _DECODER.decode(text)


def parse_text(text: str, name: str = "<transcript>") -> list[tuple[int, dict]]:
    """Parse transcript text; TranscriptError names the file and line."""
    text = text.removeprefix("\ufeff")  # a byte order mark, as some editors on Windows write
    out = []
    for n, raw in enumerate(text.split("\n"), 1):
        entry = _entry(raw.removesuffix("\r"), n, name)
        if entry is not None:
            out.append((n, entry))
    return out


def _decode(decoder: json.JSONDecoder, text: str):
    """``decoder.decode(text)``: the same value, or the same error. The usual line, an object with
    nothing around it, goes straight to the scanner, without decode's two whitespace matches and
    two calls in Python (a tenth of reading a long log); anything else, decode itself."""
    if text[:1] == "{":
        try:
            value, end = decoder.scan_once(text, 0)
        except Exception:  # noqa: BLE001 - decode says what is wrong, in its own words
            end = -1
        if end == len(text):
            return value
    return decoder.decode(text)


def _entry(raw: str, n: int, path, decoder: json.JSONDecoder = _DECODER) -> dict | None:
    """The entry on line ``n`` (None for a blank line); TranscriptError names the file and line."""
    if not raw or raw.isspace():
        return None
    try:
        entry = _decode(decoder, raw)
    except ValueError as e:
        raise TranscriptError(f"{path}:{n}: not JSON ({getattr(e, 'msg', e)})") from None
    except RecursionError:
        raise TranscriptError(f"{path}:{n}: JSON nested too deeply") from None
    if not isinstance(entry, dict):
        raise TranscriptError(f"{path}:{n}: a line must be a JSON object, not {type(entry).__name__}")
    if not isinstance(entry.get("conn"), (str, int)) or isinstance(entry.get("conn"), bool):
        raise TranscriptError(f"{path}:{n}: a line needs \"conn\" (a connection label)")
    if entry.get("event") == "closed":
        return entry
    if entry.get("from") not in ("client", "agent"):
        raise TranscriptError(f"{path}:{n}: \"from\" must be \"client\" or \"agent\"")
    if "msg" not in entry and isinstance(entry.get("raw"), str):
        return entry
    if "msg" not in entry:
        raise TranscriptError(f"{path}:{n}: a line needs \"msg\" (a JSON-RPC message object)")
    return entry  # (a msg that is JSON but not one message object, a batch or a string: the monitor's finding)


# ---------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------


def check_transcript(
    entries: Iterable[tuple[int, dict]], partial: bool = False, validator=None, rules: str = DEFAULT_RULES,
    whole: bool = False,
) -> list[Finding]:
    """Every rule of ``model/monitor/`` applied to a transcript, findings by line.
    ``entries`` may be ``read(path)``: the transcript is then never held whole. ``whole``: the log is a
    model run's export, every connection of its session in it from the session's creation on."""
    checker = monitor(rules, partial, validator, whole)
    for n, entry in entries:
        checker.feed(n, entry)
    return checker.finish()


def monitor(rules=DEFAULT_RULES, partial: bool = False, validator=None, whole: bool = False) -> Monitor:
    """The checker ``check_transcript`` runs, fed one entry at a time as a log grows:
    ``feed(line, entry)`` returns the findings that entry raised, ``finish()`` every finding at
    the end. ``rules``: a rule set's name or its ``Rules`` (``acp-lifecycle agent`` judges its
    client with it as it records, so that its report and ``trace`` on the record agree)."""
    return Monitor(rules, partial, validator, whole)
