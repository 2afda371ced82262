"""What every part of the diagrams package shares: output formats, names, the trace type."""

from __future__ import annotations

from typing import Sequence

from acp_lifecycle.model.system import Step, System


FORMATS = {"mermaid": ".mmd", "dot": ".dot", "svg": ".svg", "png": ".png"}
TEXT_FORMATS = ("mermaid", "dot")
#: The seeded bug whose lifecycle projection and counterexample ``write_all`` draws.
SHOWCASE_BUG = "answer-at-receipt"
NOT_SENT = "not sent"
#: A client sent the first prompt; the agent has not received it yet.
SENT = "sent"

Trace = Sequence[tuple[System, Step]]

