"""Running a bridge over a transcript: ``run_bridge``, ``bridge_transcript``, ``bridge_file``, ``bridge_command``."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from acp_lifecycle.sims.wire.transcript import dumps, parse

from .core import Problem, Bridge
from .translate import client_message
from .v1_to_v2 import V1AgentToV2Client
from .v2_to_v1 import V2AgentToV1Client


# ---------------------------------------------------------------------------
# Running a bridge over a transcript
# ---------------------------------------------------------------------------


@dataclass
class BridgeRun:
    """A bridge run: the input, the output side's transcript with provenance, the problems.

    ``out`` holds what the output side's clients sent (their lines of the input, in
    their version) and what the bridge sent them; ``agent_side`` what the bridge sent
    the agent and what the agent sent."""

    to: str
    options: dict
    inp: list  # [(line, entry)]
    out: list  # [Out]
    problems: list  # [Problem]
    absorbed: list  # input lines absorbed (they repeat what the bridge already sent)
    partial: bool = False
    agent_side: list = field(default_factory=list)  # [Out]
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def entries(self) -> list[dict]:
        return [o.entry for o in self.out]

    def cached(self, name: str, make):
        if name not in self._cache:
            self._cache[name] = make()
        return self._cache[name]


def make_bridge(to: str, **options) -> Bridge:
    """The bridge whose output side is ``to``: "v2" (a v1 agent) or "v1" (a v2 agent)."""
    if to == "v2":
        return V1AgentToV2Client(**options)
    if to == "v1":
        return V2AgentToV1Client(**options)
    raise ValueError(f"to must be 'v1' or 'v2', not {to!r}")


def _numbered(entries) -> list[tuple[int, dict]]:
    entries = list(entries)
    if entries and isinstance(entries[0], tuple):
        return entries
    return list(enumerate(entries, 1))


def run_bridge(entries, to: str, partial: bool = False, finite: bool = False, **options) -> BridgeRun:
    """Run a bridge over ``entries`` (entries, or ``(line, entry)`` pairs as ``parse`` gives).
    ``finite``: the entries are known to hold no NaN or Infinity (the model's), not checked."""
    inp = _numbered(entries)
    b = make_bridge(to, **options)
    b.check_numbers = not finite
    for n, entry in inp:
        b.feed(_as_client_sent(entry, to), n)
    b.finish(partial)
    options.pop("validators", None)
    return BridgeRun(to, dict(options), inp, b.trace, b.problems, b.absorbed, partial, b.agent_side)


def _as_client_sent(entry, to: str):
    """A transcript line as the bridge receives it: a client's message in the clients' version."""
    if isinstance(entry, dict) and entry.get("from") == "client" and isinstance(entry.get("msg"), dict):
        msg = client_message(entry["msg"], to)
        if msg is not entry["msg"]:
            return dict(entry, msg=msg)
    return entry


def bridge_transcript(entries, to: str, partial: bool = False, **options) -> tuple[list[dict], list[Problem]]:
    """``(out_entries, problems)``: the transcript the ``to`` side sees, and what could not cross.

    ``to="v2"``: the input is a v1 agent's transcript; options ``insertion``
    ("echo" | "immediate"). ``to="v1"``: the input is a v2 agent's transcript;
    option ``background`` ("forward" | "drop"). ``partial``: the log is cut, so
    the bridge does not settle what it still holds at the end.
    """
    r = run_bridge(entries, to, partial, **options)
    return r.entries, r.problems


def bridge_file(path, to: str, partial: bool = False, **options) -> tuple[str, list[Problem]]:
    """``(text, problems)`` for a transcript file; ``TranscriptError`` (one line) when it is unusable."""
    out, problems = bridge_transcript(parse(Path(path)), to, partial, **options)
    return dumps(out), problems


def bridge_command(
    path, to: str, insertion: str | None = None, as_json: bool = False, partial: bool = False,
    background: str | None = None, out=None, err=None, validators: dict | None = None,
) -> int:
    """``acp-lifecycle bridge --to v1|v2 FILE``: the transcript on ``out``, problems on ``err``.

    ``insertion`` applies to ``--to v2`` only (default "echo"), ``background`` to
    ``--to v1`` only (default "forward"); the other direction's option, an unknown
    value or an unknown ``to`` raises ``ValueError`` (one line). Returns the exit
    status: 0 when everything crossed, 1 when a problem was reported (the
    transcript is still written). Raises ``TranscriptError`` (one line naming file
    and line) for an unusable file. The CLI turns both errors into exit status 2.
    With ``as_json`` one object goes to ``out``, on one line: ``{"file", "to", "options",
    "transcript": [entries], "problems": [{"line", "kind", "message"}]}``.
    ``validators`` (``serve.load_validators``, as the CLI passes them) is the output
    gate of ``bridge serve``: a message the bridge built that its side's schema rejects
    is not written, and is a problem ``invalid-output`` at its line.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if to == "v2":
        if background is not None:
            raise ValueError("--background applies to --to v1 (a v2 agent's transcript)")
        options = {"insertion": insertion or "echo"}
    elif to == "v1":
        if insertion is not None:
            raise ValueError("--insertion applies to --to v2 (a v1 agent's transcript)")
        options = {"background": background or "forward"}
    else:
        raise ValueError(f"--to must be v1 or v2, not {to!r}")
    make_bridge(to, **options)  # validates the option values before reading the file
    text, problems = bridge_file(path, to, partial, validators=validators, **options)
    if as_json:
        data = {
            "file": str(path),
            "to": to,
            "options": options,
            "transcript": [json.loads(line) for line in text.splitlines()],
            "problems": [p.data() for p in problems],
        }
        out.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")  # one record, one line
    else:
        out.write(text)
        for p in problems:
            err.write(f"{path}:{p.line}: {p.kind}: {p.message}\n")
    return 1 if problems else 0
