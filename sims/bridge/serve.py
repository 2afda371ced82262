"""``acp-lifecycle bridge serve``: a live stdio bridge between a client and an agent of the other version.

The client (an editor) starts ``acp-lifecycle bridge serve --to v2 -- AGENT_CMD ARGS``
in place of the agent. The bridge starts the agent, reads the client's JSON-RPC lines
on its stdin and the agent's on the agent's stdout, feeds each, in the order it
arrives, to the same bridge class the transcript converter and ``check --bridge`` use
(``V1AgentToV2Client`` for ``--to v2``, ``V2AgentToV1Client`` for ``--to v1``), and
writes what the bridge sends: to the agent's stdin, or to its own stdout for the client.
Nothing but JSON-RPC messages ever reaches the client's stream: problems go to stderr
(``bridge: message N: KIND: MESSAGE``) and, with ``--record``, into the record; the
agent's own stderr passes through to the bridge's stderr once it has started (its
first message, or ``START_WINDOW`` seconds). An agent that cannot start (it exits
with an error before writing anything) is a ``RecordError``: one line, its stack
trace summarised (``_Start``), and no record file written or overwritten.

The record (``--record OUT.jsonl``; ``{time}`` and ``{pid}`` in the name are filled
in) is three files, written as the session goes:

* ``OUT.jsonl``: everything in order, one object per line: what the bridge received
  (``{"n", "side", "conn", "from", "msg"}``, ``n`` counting received messages, the
  line number problems refer to), what it sent (``{"side", "conn", "from", "msg"}``),
  and each problem (``{"side": "bridge", "problem": {"line", "kind", "message"}}``).
  ``replay_record`` feeds the received messages to a fresh bridge again.
* ``OUT.v2.jsonl`` and ``OUT.v1.jsonl``: each side alone, as a transcript
  (docs/transcripts.md), ready for ``acp-lifecycle trace`` (the v2 side) and for
  schema checks.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

from acp_lifecycle.sims.wire.record import START_WINDOW, StderrGate, could_not_start

from .core import bad_number_at, Bridge
from .run import make_bridge

__all__ = ["RecordError", "record_paths", "serve", "replay_record", "recorded_sent", "record_sides", "load_validators", "schema_problems"]

CONN = "c0"  # the one client connection of a stdio bridge
AGENT_GRACE = 10.0  # seconds an agent may take to exit once the client has gone


class RecordError(ValueError):
    """The record cannot be written (it exists, or its folder does not); one line."""


def record_paths(path: str) -> tuple[Path, Path, Path]:
    """``(combined, v1 side, v2 side)`` for ``--record path``, ``{time}`` and ``{pid}`` filled in
    (the command checks each can be written before the session starts)."""
    if not str(path).strip():
        raise RecordError("--record: give a file name")
    path = str(path).replace("{time}", time.strftime("%Y%m%dT%H%M%S")).replace("{pid}", str(os.getpid()))
    stem = path[: -len(".jsonl")] if path.endswith(".jsonl") else path
    return Path(path), Path(stem + ".v1.jsonl"), Path(stem + ".v2.jsonl")


def load_validators(to: str) -> tuple[dict, str]:
    """The output gate's validators, by sender (``{"client": ..., "agent": ...}``), and a
    note when the schemas are not there (then nothing is checked)."""
    from acp_lifecycle.sims.wire.schema import SchemaError, Validator, locate

    try:
        v1, v2 = Validator(locate(version="v1")), Validator(locate(version="v2"))
    except SchemaError as e:
        return {}, f"messages are not checked against the schemas ({e})"
    # What a client sends goes to the agent: to v2, the agent speaks v1.
    return ({"client": v1, "agent": v2} if to == "v2" else {"client": v2, "agent": v1}), ""


def _dumps(msg) -> str:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class _Recorder:
    """Writes the record as the session goes (line-buffered, so a killed bridge leaves it whole).
    The files are opened at the agent's first message or a normal end (``open()``); the lines
    before wait in memory, so an agent that cannot start leaves no file and overwrites none."""

    def __init__(self, paths, to: str):
        self.to, self.frm = to, "v1" if to == "v2" else "v2"
        self.paths = list(paths) if paths else []
        self.files: list | None = None
        self.pending: list[tuple[int, str]] = []

    def _write(self, i: int, text: str) -> None:
        if self.files is None:
            self.pending.append((i, text))
        else:
            self.files[i].write(text)

    def open(self) -> None:
        if self.files is not None or not self.paths:
            return
        files = []
        try:
            for path in self.paths:
                files.append(open(path, "w", encoding="utf-8", buffering=1))
        except OSError as e:
            for f in files:
                f.close()
            raise RecordError(f"--record: cannot write {path}: {e.strerror or e}") from None
        self.files = files
        for i, text in self.pending:
            files[i].write(text)
        self.pending = []

    def _side(self, side: str, entry: dict, n: int | None = None) -> None:
        if not self.paths:
            return
        line = {"n": n} if n is not None else {}
        line.update({"side": side, **entry})
        self._write(0, _dumps(line) + "\n")
        self._write(1 if side == "v1" else 2, _dumps(entry) + "\n")

    def unreadable(self, n: int, who: str, raw: bytes) -> None:
        if self.paths:
            side = self.to if who == "client" else self.frm
            text = raw.decode("utf-8", errors="replace").rstrip("\n")
            self._write(0, _dumps({"n": n, "side": side, "from": who, "unreadable": text}) + "\n")

    def received(self, n: int, entry: dict) -> None:
        # A client's message is on the clients' side, the agent's on the agent's.
        self._side(self.to if entry["from"] == "client" else self.frm, entry, n)

    def sent(self, entry: dict) -> None:
        # Sent to the agent (from "client") is on the agent's side.
        self._side(self.frm if entry["from"] == "client" else self.to, entry)

    def problem(self, p) -> None:
        if self.paths:
            self._write(0, _dumps({"side": "bridge", "problem": p.data()}) + "\n")

    def close(self) -> None:
        for f in self.files or []:
            f.close()


async def _lines(reader: asyncio.StreamReader, who: str, queue: asyncio.Queue) -> None:
    while True:
        try:
            raw = await reader.readline()
        except ValueError:  # a line longer than the limit
            await queue.put((who, None, "a line longer than 64 MiB"))
            continue
        if not raw:
            await queue.put((who, None, None))
            return
        await queue.put((who, raw, ""))


class _Start:
    """Whether the agent started. Its stderr is held (``StderrGate``) until its first message or
    ``START_WINDOW`` seconds, then passes through; an agent that ended with an error before it
    wrote anything, on its own while the client was there (or one that never sent anything), or
    within ``START_WINDOW`` whatever the client did, did not start: ``failure()`` is the one line
    that says so, its stack trace summarised."""

    def __init__(self, command: list[str], stderr):
        self.command = command
        self.gate = StderrGate(_stderr_writer(stderr))
        self.spoke = {"client": False, "agent": False}
        self.client_gone = self.stopped = False

    def heard(self, who: str, recorder: _Recorder) -> None:
        if not self.spoke[who]:
            self.spoke[who] = True
            if who == "agent":
                self.gate.release()
                recorder.open()

    def failed(self, code: int | None) -> bool:
        alone = not self.client_gone or not self.spoke["client"] or self.gate.holding()
        return bool(code) and not self.spoke["agent"] and alone and not self.stopped

    def failure(self, code: int | None, what: str) -> str:
        return could_not_start(self.command, code, self.gate.summary(), what) if self.failed(code) else ""


def _stderr_writer(stderr):
    if stderr is sys.stderr and hasattr(sys.stderr, "buffer"):
        def write(data: bytes) -> None:
            sys.stderr.buffer.write(data)
            sys.stderr.flush()
    else:
        def write(data: bytes) -> None:
            stderr.write(data.decode("utf-8", errors="replace"))
            stderr.flush()
    return write


async def _drain(reader: asyncio.StreamReader, gate: StderrGate) -> None:
    while data := await reader.read(65536):
        gate.feed(data)


async def serve(
    to: str, command: list[str], record=None, options: dict | None = None, validators: dict | None = None,
    stdin=None, stdout=None, stderr=None,
) -> int:
    """Run the bridge between the client on ``stdin``/``stdout`` (default: this process's)
    and the agent ``command``. Returns the exit status: the agent's when it failed, else 0.
    An agent that cannot start is a ``RecordError`` (one line; no record written)."""
    stderr = stderr or sys.stderr
    options = dict(options or {})
    # No history: the bridge keeps only what the translation needs (memory stays flat).
    bridge: Bridge = make_bridge(to, validators=validators, history=False, **options)
    loop = asyncio.get_running_loop()
    limit = 64 * 1024 * 1024
    try:
        agent = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            limit=limit)
    except OSError as e:
        raise RecordError(f"cannot start the agent {command[0]}: {e.strerror or e}") from None
    recorder = _Recorder(record, to)  # (its files only once the agent runs: a failed start leaves none)
    start = _Start(command, stderr)
    window = loop.call_later(START_WINDOW, start.gate.release)
    drain = asyncio.ensure_future(_drain(agent.stderr, start.gate))

    if stdin is None:
        stdin = await _client_input(loop, limit)
    out = stdout if stdout is not None else sys.stdout.buffer

    def stop(*_):
        if agent.returncode is None:
            start.stopped = True
            agent.terminate()

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - not the main thread / platform
            pass
    try:
        await _session(bridge, agent, stdin, out, stderr, recorder, start, stop)
    finally:
        window.cancel()
        if agent.stdin is not None and not agent.stdin.is_closing():
            agent.stdin.close()
        try:
            await asyncio.wait_for(agent.wait(), 5)
        except asyncio.TimeoutError:
            agent.kill()
            await agent.wait()
        try:
            await asyncio.wait_for(drain, 5)
        except asyncio.TimeoutError:
            pass
        failed = start.failure(agent.returncode, f"{recorder.paths[0]} not written" if recorder.paths else "the bridge stops")
        if not failed:
            start.gate.release()
            recorder.open()
        recorder.close()
    if failed:
        raise RecordError(failed)
    code = agent.returncode or 0
    return code if code > 0 else 0


async def _client_input(loop, limit: int) -> asyncio.StreamReader:
    """The client's side: this process's stdin as a stream. A pipe, a socket or a terminal is
    read by the loop; anything else (a file, ``/dev/null``) cannot be, so a thread reads it
    (a file is the client's input to its end; ``/dev/null`` is an immediate end of input)."""
    import stat
    import threading

    reader = asyncio.StreamReader(limit=limit, loop=loop)
    fd = sys.stdin.fileno()
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return reader

    def pump() -> None:
        try:
            while data := os.read(fd, 65536):
                loop.call_soon_threadsafe(reader.feed_data, data)
        except OSError:
            pass
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="client-stdin", daemon=True).start()
    return reader


async def _session(bridge: Bridge, agent, stdin, out, stderr, recorder: _Recorder, start: _Start, stop) -> None:
    """Relay through the bridge until the agent is gone (or the client, and the agent after a grace)."""
    queue: asyncio.Queue = asyncio.Queue()
    readers = [asyncio.ensure_future(_lines(stdin, "client", queue)), asyncio.ensure_future(_lines(agent.stdout, "agent", queue))]
    n = 0
    open_sides = {"client", "agent"}

    def say_problems() -> None:
        for p in bridge.problems:
            stderr.write(f"bridge: message {p.line}: {p.kind}: {p.message}\n")
            recorder.problem(p)
        bridge.problems.clear()  # said and recorded: not kept
        stderr.flush()

    async def send(entries) -> None:
        for e in entries:
            if "msg" not in e:
                continue  # (a closed event)
            data = (_dumps(e["msg"]) + "\n").encode("utf-8")
            recorder.sent(e)
            if e["from"] == "client":
                if agent.stdin is not None and not agent.stdin.is_closing():
                    agent.stdin.write(data)
                    try:
                        await agent.stdin.drain()
                    except (BrokenPipeError, ConnectionResetError):
                        pass
            else:
                out.write(data)
                out.flush()

    try:
        while open_sides:
            if "client" in open_sides:
                who, raw, why = await queue.get()
            else:
                # The client has gone and the agent's input is closed: give it a while to finish.
                try:
                    who, raw, why = await asyncio.wait_for(queue.get(), AGENT_GRACE)
                except asyncio.TimeoutError:
                    stop()
                    continue
            if raw is None and why is None:
                open_sides.discard(who)
                if who == "client":
                    start.client_gone = True
                    if agent.stdin is not None:
                        agent.stdin.close()  # the client is gone: the agent sees end of input
                if who == "agent":
                    break  # the agent is gone: nothing more can cross
                continue
            start.heard(who, recorder)
            n += 1
            entry, error = _entry(who, raw or b"", why)
            if entry is None:
                recorder.unreadable(n, who, raw or b"")
                bridge._line = n
                bridge.problem("malformed", error)
                await send([_unreadable_reply(who)])
                say_problems()
                continue
            recorder.received(n, entry)
            await send(bridge.feed(entry, n))
            say_problems()
        if not start.failed(agent.returncode if agent.returncode is not None else await _exit(agent)):
            await send(bridge.finish())
            say_problems()
    finally:
        for r in readers:
            r.cancel()


async def _exit(agent) -> int | None:
    """The agent's exit status, if it ends within a moment (its output has ended)."""
    try:
        return await asyncio.wait_for(agent.wait(), 5)
    except asyncio.TimeoutError:
        return None


def _entry(who: str, raw: bytes, why: str) -> tuple[dict | None, str]:
    if why:
        return None, f"{why} from the {who}; answered with a parse error"
    try:
        msg = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, f"a line from the {who} that is not UTF-8; answered with a parse error"
    except ValueError:
        return None, f"a line from the {who} that is not JSON; answered with a parse error"
    except RecursionError:
        return None, f"a line from the {who} nested too deeply; answered with a parse error"
    if bad_number_at(msg):
        return None, f"a message from the {who} with NaN or Infinity ({bad_number_at(msg)}), which JSON does not have; answered with a parse error"
    if not isinstance(msg, dict):
        return None, f"a line from the {who} that is not a JSON-RPC message (an object); answered with a parse error"
    return {"conn": CONN, "from": who, "msg": msg}, ""


def _unreadable_reply(who: str) -> dict:
    """JSON-RPC: a message that cannot be read gets a parse error with a null id, to its sender."""
    return {"conn": CONN, "from": "agent" if who == "client" else "client",
            "msg": {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}}


def replay_record(path, to: str, options: dict | None = None, validators: dict | None = None):
    """Feed the messages a record shows the bridge received to a fresh bridge, in order.

    Returns ``(bridge, sent)``: the bridge (its ``trace``, ``agent_side``, ``problems``)
    and what it sent, to compare with what the record says was sent."""
    bridge = make_bridge(to, validators=validators, **dict(options or {}))
    sent = []
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        if "unreadable" in line:
            sent.append(_unreadable_reply(line["from"]))
        elif "n" in line:
            entry = {k: line[k] for k in ("conn", "from", "msg")}
            sent += [e for e in bridge.feed(entry, line["n"]) if "msg" in e]
    sent += [e for e in bridge.finish() if "msg" in e]
    return bridge, sent


def recorded_sent(path) -> list[dict]:
    """What a record says the bridge sent, in order."""
    out = []
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        if "n" not in line and line.get("side") != "bridge":
            out.append({k: line[k] for k in ("conn", "from", "msg")})
    return out


def schema_problems(entries, validator) -> list[str]:
    """Every schema problem of a one-side transcript (entries ``{"conn", "from", "msg"}``),
    as ``"line N: problem"``; a response is checked against the method of its request."""
    asked: dict = {}
    out = []
    for n, e in enumerate(entries, 1):
        if "msg" not in e:
            continue
        m = e["msg"]
        method = None
        if "method" in m and "id" in m:
            asked[(e["conn"], e["from"], json.dumps(m["id"]))] = m["method"]
        elif "method" not in m:
            method = asked.get((e["conn"], "agent" if e["from"] == "client" else "client", json.dumps(m.get("id"))))
        out += [f"line {n}: {p}" for p in validator.check(m, e["from"], method)]
    return out


def record_sides(path) -> dict:
    """A record read back: ``{"v1": [entries], "v2": [entries], "problems": [data]}``, each
    side a transcript in order (what its clients and agent sent there)."""
    sides: dict = {"v1": [], "v2": [], "problems": []}
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        if line.get("side") == "bridge":
            sides["problems"].append(line["problem"])
        elif "msg" in line:
            sides[line["side"]].append({k: line[k] for k in ("conn", "from", "msg")})
    return sides
