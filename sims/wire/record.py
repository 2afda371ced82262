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

Order: a line is written to the transcript just before it is handed to the
other side, so nothing can answer or react to it before it is recorded. For
stdio this is the order at the agent except for lines in flight in the pipes:
a message the agent wrote before it read the client's latest line may be
recorded after that line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import BinaryIO

__all__ = ["RecordError", "Recorder", "record"]

_CHUNK = 65536


class RecordError(Exception):
    """Recording cannot start (the output exists, the agent cannot be run); one line."""


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


def _pump(src: int, dst: BinaryIO | None, dst_fd: int | None, sender: str, recorder: Recorder, after=None) -> None:
    """Copy src to dst chunk by chunk, recording lines, until EOF or a broken pipe."""
    try:
        while True:
            try:
                data = os.read(src, _CHUNK)
            except OSError:
                break
            if not data:
                break
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


def record(
    out: str | os.PathLike,
    command: list[str],
    *,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    force: bool = False,
    conn: str = "stdio",
) -> int:
    """Run ``command`` as a stdio agent between ``stdin``/``stdout`` (default: this
    process's) and write the transcript to ``out``; the agent's exit status."""
    import sys

    if not command:
        raise RecordError("no agent command (give it after --: record OUT.jsonl -- AGENT [ARGS...])")
    path = Path(out)
    if path.is_dir():
        raise RecordError(f"{path}: is a directory")
    try:
        handle = open(path, "wb" if force else "xb")
    except FileExistsError:
        raise RecordError(f"{path} exists: not overwriting it (pass --force to replace it)") from None
    except OSError as e:
        raise RecordError(f"cannot write {path}: {e.strerror or e}") from None
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    try:
        agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    except OSError as e:
        handle.close()
        if not force:
            path.unlink(missing_ok=True)
        raise RecordError(f"cannot run {command[0]!r}: {e.strerror or e}") from None
    recorder = Recorder(handle, conn)

    def close_agent_stdin():
        try:
            agent.stdin.close()
        except OSError:
            pass

    to_agent = threading.Thread(
        target=_pump, args=(stdin.fileno(), None, agent.stdin.fileno(), "client", recorder, close_agent_stdin),
        daemon=True,
    )
    from_agent = threading.Thread(target=_pump, args=(agent.stdout.fileno(), stdout, None, "agent", recorder), daemon=True)
    forwarded = []

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
        to_agent.start()
        from_agent.start()
        while True:
            try:
                code = agent.wait()
                break
            except KeyboardInterrupt:  # pragma: no cover - the handler above takes SIGINT
                forward(signal.SIGINT, None)
        from_agent.join()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        recorder.flush("client")
        handle.close()
    return 128 - code if code < 0 else code
