"""One thing ``probe`` reports about a v1 agent's run: what the judge (judge.py) and the notes
(observe.py) both produce, so it lives below both."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["Finding"]


@dataclass(frozen=True)
class Finding:
    source: str
    rule: str
    level: str
    message: str
    line: int  # in the v1 transcript
    v2_line: int | None = None  # in the bridged transcript
    clause: str = ""
    quote: str = ""

    def data(self) -> dict:
        return asdict(self)
