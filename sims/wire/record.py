"""Record a stdio ACP agent's traffic as a transcript, relaying it unchanged.

``record(out, command)`` starts the agent, copies the client's stdin to the
agent's stdin and the agent's stdout to the client's stdout byte for byte (in
whatever chunks they arrive), lets the agent's stderr through, and writes one
transcript line per JSON-RPC line that crosses, flushed as it is written:
``{"conn": "stdio", "from": "client" | "agent", "msg": <the line's bytes>}``.
The message is embedded verbatim (never re-serialised: ids beyond 2^53,
``1.0`` and key order stay as sent). A line that is not a JSON object is kept
as ``{"conn", "from", "raw": "<text>"}`` so nothing is lost; ``trace`` reports
it. The result is the agent's exit status (128 + N when a signal N ended it).

An agent that cannot start (``node missing.js``: it exits with an error, before it
wrote a byte to stdout, on its own while the client is still there, or with no
input at all, or within ``START_WINDOW`` whatever the client did) is a
``RecordError``: one line with the command, its exit status and its error line
(``stderr_summary``), and no transcript file, so
nothing is created or overwritten and the retry needs no ``--force``. To make that possible the file
is opened at the agent's first output (or at a normal end; the lines before
wait in memory), and the agent's stderr is held until its first output or for
``START_WINDOW`` seconds, whichever comes first, then passes through: a
program's stack trace is summarised, not shown, when it never started.

Order: a line is written to the transcript just before it is handed to the
other side, so nothing can answer or react to it before it is recorded. For
stdio this is the order at the agent except for lines in flight in the pipes:
a message the agent wrote before it read the client's latest line may be
recorded after that line.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import threading
from pathlib import Path
from typing import BinaryIO

__all__ = ["RecordError", "Recorder", "StderrGate", "record", "stderr_summary", "could_not_start"]

_CHUNK = 65536
#: Seconds the agent's stderr is held for, unless it writes to stdout first.
START_WINDOW = 3.0
_HOLD_LIMIT = 1 << 20  # bytes of stderr held at most (beyond: it passes through)
_ERROR_LINE = re.compile(r"^(?:Uncaught\s+)?[\w.$]*(?:Error|Exception)\b[^:]{0,40}:\s*\S")


class RecordError(Exception):
    """Recording cannot start (the output exists, the agent cannot be run); one line."""


def stderr_summary(data: bytes, limit: int = 160) -> str:
    """The one line of a failed program's stderr that says what went wrong: the last line
    that reads like an error (``Error: Cannot find module ...``, ``ModuleNotFoundError:
    ...``), else the last non-empty line; shortened to ``limit`` characters ("" for none)."""
    lines = [" ".join(ln.split()) for ln in data.decode("utf-8", errors="replace").splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        return ""
    line = next((ln for ln in reversed(lines) if _ERROR_LINE.match(ln)), lines[-1])
    return line if len(line) <= limit else line[: limit - 3] + "..."


def could_not_start(command: list[str], code: int, summary: str, what: str) -> str:
    """The one line for an agent that ended, with ``code`` (``returncode``), before it wrote anything."""
    status = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    said = f" ({summary})" if summary else ""
    return f"the agent could not start: `{shlex.join(command)}` {status} before it wrote anything{said}; {what}"


class StderrGate:
    """The agent's stderr, held until ``release()`` (its first output, a timer, a normal end),
    then passed through to ``write``; what is held is summarised if it never started."""

    def __init__(self, write):
        self.write = write
        self.held = bytearray()
        self.open = False
        self.lock = threading.Lock()

    def feed(self, data: bytes) -> None:
        with self.lock:
            self.held += data
            if self.open or len(self.held) > _HOLD_LIMIT:
                self._release()

    def _release(self) -> None:
        if self.held:
            try:
                self.write(bytes(self.held))
            except (OSError, ValueError):
                pass
            self.held.clear()
        self.open = True

    def release(self) -> None:
        with self.lock:
            self._release()

    def holding(self) -> bool:
        """Whether the stderr is still held: neither the first output nor the timer came."""
        with self.lock:
            return not self.open

    def summary(self) -> str:
        """The held stderr's error line (and nothing is ever shown of it)."""
        with self.lock:
            self.open = True  # later bytes (there should be none) pass through
            text, self.held = bytes(self.held), bytearray()
        return stderr_summary(text)


class _Output:
    """The transcript file, opened only once the agent has shown that it runs (``open()``):
    until then the lines wait in memory, so an agent that cannot start leaves no file."""

    def __init__(self, path: Path, force: bool):
        self.path, self.force = path, force
        self.pending = bytearray()
        self.handle: BinaryIO | None = None
        self.error = ""

    def write(self, data: bytes) -> None:
        if self.handle is not None:
            self.handle.write(data)
        elif not self.error:
            self.pending += data

    def flush(self) -> None:
        if self.handle is not None:
            self.handle.flush()

    def open(self) -> None:
        if self.handle is not None or self.error:
            return
        try:
            self.handle = open(self.path, "wb" if self.force else "xb")
        except FileExistsError:
            self.error = f"{self.path} appeared while recording: not overwriting it (pass --force to replace it)"
        except OSError as e:
            self.error = f"cannot write {self.path}: {e.strerror or e}"
        else:
            self.handle.write(self.pending)
            self.handle.flush()
        self.pending = bytearray()

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


class Recorder:
    """Turns the bytes of each direction into transcript lines (thread-safe)."""

    def __init__(self, out: BinaryIO, conn: str = "stdio"):
        self.out = out
        self.prefix = json.dumps({"conn": conn}, separators=(",", ":"))[:-1]
        self.lock = threading.Lock()
        self.partial = {"client": b"", "agent": b""}
        self.lines = 0

    def feed(self, sender: str, data: bytes) -> None:
        buf = self.partial[sender] + data
        *lines, rest = buf.split(b"\n")
        self.partial[sender] = rest
        for line in lines:
            self._line(sender, line)

    def flush(self, sender: str) -> None:
        rest, self.partial[sender] = self.partial[sender], b""
        if rest:
            self._line(sender, rest)

    def _line(self, sender: str, raw: bytes) -> None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip():
            return
        try:
            text = raw.decode("utf-8")
            is_object = isinstance(json.loads(text), dict)
        except (UnicodeDecodeError, ValueError, RecursionError):
            text, is_object = raw.decode("utf-8", errors="replace"), False
        if is_object:
            line = f'{self.prefix},"from":"{sender}","msg":{text}}}\n'
        else:
            line = f'{self.prefix},"from":"{sender}","raw":{json.dumps(text, ensure_ascii=False)}}}\n'
        with self.lock:
            self.out.write(line.encode("utf-8"))
            self.out.flush()
            self.lines += 1


def _pump(src: int, dst: BinaryIO | None, dst_fd: int | None, sender: str, recorder: Recorder,
          after=None, first=None, ended=None) -> None:
    """Copy src to dst chunk by chunk, recording lines, until EOF or a broken pipe.
    ``first()`` runs before the first chunk is recorded, ``ended()`` at the source's end of file."""
    try:
        while True:
            try:
                data = os.read(src, _CHUNK)
            except OSError:
                break
            if not data:
                if ended is not None:
                    ended()
                break
            if first is not None:
                first()
                first = None
            # Record a line before handing it over: the other side cannot
            # react to it before it is in the transcript.
            recorder.feed(sender, data)
            try:
                if dst_fd is not None:
                    view = memoryview(data)
                    while view:
                        n = os.write(dst_fd, view)
                        view = view[n:]
                else:
                    dst.write(data)
                    dst.flush()
            except (BrokenPipeError, OSError):
                break
    finally:
        recorder.flush(sender)
        if after is not None:
            after()


def _drain(src: int, gate: StderrGate) -> None:
    """The agent's stderr into the gate, until its end."""
    while True:
        try:
            data = os.read(src, _CHUNK)
        except OSError:
            return
        if not data:
            return
        gate.feed(data)


def _wait(agent: subprocess.Popen, threads: list[threading.Thread], timer: threading.Timer, forwarded: list) -> int:
    """Start the relay threads and the stderr timer, pass SIGINT/SIGTERM/SIGHUP on to the agent
    (noted in ``forwarded``), and wait for it to end and its output to drain; its returncode."""

    def forward(signum, frame):
        forwarded.append(signum)
        try:
            agent.send_signal(signum)
        except OSError:
            pass

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, forward)
    try:
        for t in threads:
            t.start()
        timer.start()
        while True:
            try:
                code = agent.wait()
                break
            except KeyboardInterrupt:  # pragma: no cover - the handler above takes SIGINT
                forward(signal.SIGINT, None)
        threads[1].join()
        threads[2].join(timeout=5)
    finally:
        timer.cancel()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code


def _write_stderr(data: bytes) -> None:
    import sys

    sys.stderr.buffer.write(data) if hasattr(sys.stderr, "buffer") else sys.stderr.write(data.decode("utf-8", "replace"))
    sys.stderr.flush()


def record(
    out: str | os.PathLike,
    command: list[str],
    *,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    force: bool = False,
    conn: str = "stdio",
    stderr_write=None,
) -> int:
    """Run ``command`` as a stdio agent between ``stdin``/``stdout`` (default: this
    process's) and write the transcript to ``out``; the agent's exit status. Its stderr
    goes to ``stderr_write`` (default: this process's stderr) once it has started."""
    import sys

    if not command:
        raise RecordError("no agent command (give it after --: record OUT.jsonl -- AGENT [ARGS...])")
    path = Path(out)
    if path.is_dir():
        raise RecordError(f"{path}: is a directory")
    if not force and (path.exists() or path.is_symlink()):
        raise RecordError(f"{path} exists: not overwriting it (pass --force to replace it)")
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    try:
        agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    except OSError as e:
        raise RecordError(f"cannot run {command[0]!r}: {e.strerror or e}") from None
    output = _Output(path, force)
    recorder = Recorder(output, conn)
    gate = StderrGate(stderr_write or _write_stderr)
    spoke, client_spoke, client_ended, forwarded = threading.Event(), threading.Event(), threading.Event(), []

    def started():  # the agent's first output: it runs
        spoke.set()
        gate.release()
        with recorder.lock:
            output.open()

    def close_agent_stdin():
        try:
            agent.stdin.close()
        except OSError:
            pass

    threads = [
        threading.Thread(target=_pump, args=(stdin.fileno(), None, agent.stdin.fileno(), "client", recorder, close_agent_stdin),
                         kwargs={"first": client_spoke.set, "ended": client_ended.set}, daemon=True),
        threading.Thread(target=_pump, args=(agent.stdout.fileno(), stdout, None, "agent", recorder),
                         kwargs={"first": started}, daemon=True),
        threading.Thread(target=_drain, args=(agent.stderr.fileno(), gate), daemon=True),
    ]
    timer = threading.Timer(START_WINDOW, gate.release)
    timer.daemon = True

    code = _wait(agent, threads, timer, forwarded)
    # It ended with an error, having written nothing, on its own while the client was still
    # there (or one that never sent anything), or within START_WINDOW whatever the client did
    # (`echo LINE | record ...` closes stdin at once; node fails on a missing file just as fast):
    # it did not start.
    alone = not client_ended.is_set() or not client_spoke.is_set() or gate.holding()
    if code != 0 and not spoke.is_set() and alone and not forwarded:
        raise RecordError(could_not_start(command, code, gate.summary(), f"{path} not written"))
    gate.release()
    recorder.flush("client")
    with recorder.lock:
        output.open()
        output.close()
    if output.error:
        raise RecordError(output.error)
    return 128 - code if code < 0 else code
