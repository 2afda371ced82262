"""The ``Clause`` record: one normative rule, quoted verbatim from its source."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Clause", "LEVELS", "SOURCES"]

SOURCES = ("RFD", "2.4.0")
LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "NOT REQUIRED", "MAY")


@dataclass(frozen=True, slots=True)
class Clause:
    """One normative rule, quoted verbatim from its source."""

    #: stable id, e.g. "RFD-INSERT-RESPOND"
    id: str
    #: "RFD" or "2.4.0"
    source: str
    #: one of LEVELS
    level: str
    #: the RFD heading, or the schema $defs name (and variant), it sits under
    section: str
    #: the whole sentence, verbatim
    text: str
    #: empty when the model checks it; else one sentence: why it does not
    out_of_scope: str = ""
    #: empty when a rule of the transcript monitor (model/monitor.py) judges it; else why no
    #: transcript can show it broken ("not on the wire: ..."; see WIRE_REASONS)
    wire: str = ""

    @property
    def in_scope(self) -> bool:
        return not self.out_of_scope
