"""The ``Clause`` record: one normative rule, quoted verbatim from its source.

``section`` for the RFD is the heading the sentence sits under; for 2.4.0 it is
the schema ``$defs`` name holding the description, then, after a slash, the
variant's title (or, untitled, its tag value) where the text sits on a variant of
a union (``"ClientRequest / PromptRequest"``, ``"IdleStateUpdate / cancelled"``),
or the property's name (``"PromptResponse / messageId"``). ``ProtocolLevel`` is
the root ``anyOf`` entry of that title, which holds ``$/cancel_request``.

Rule 1: ``text`` is VERBATIM. It is the whole sentence, with the exact
characters of the source: typographic quotes, backticks, and for 2.4.0 the
line breaks inside the schema description. A table row of the RFD is quoted
as one "sentence", its cells separated by the tab of the source. Never edit a
quote to make it read better; quote a different sentence instead.

Rule 2: the project never reads the sources at run or test time. They were
read once, when this file was written, and the quotes were checked against
them then (every RFD text is a substring of the RFD file; every 2.4.0 text is
a substring of a description in the schema). Re-check by hand when a source
changes.

Rule 3: ids are stable. ``RFD-<TOPIC>-<SHORT>`` or ``S240-<TOPIC>-<SHORT>``,
upper case with dashes. Never rename or reuse an id; a rule that disappears
from its source keeps its id and gains an ``out_of_scope`` reason.

Rule 4: every sentence of the RFD holding MUST, MUST NOT, SHOULD, SHOULD NOT
or NOT REQUIRED is here (16 sentences in the quoted revision). A sentence with
two rules gives two clauses, each quoting the whole sentence. The other
clauses are sentences without a capitalised keyword that the model relies on
(definitions, table rows, lower-case "must not"/"should not", open
questions); their ``level`` is the force the model gives them and their ids
are listed in ``IMPLIED_LEVEL``.

Rule 5: ``out_of_scope`` is empty exactly when a property of the model checks
the clause. Otherwise it is one sentence saying why no property checks it: a
rule only the wire shows (the model has one session, which exists before the
run starts), a permission the model agent does not use, something the model
does not have (background work), or, plainly, that no property
judges it yet. A permission (``MAY``) the model agent does use is cited by the
``sometimes`` witness that shows the choice is explored.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Clause", "LEVELS", "SOURCES"]

SOURCES = ("RFD", "2.4.0", "JSON-RPC 2.0")
LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "NOT REQUIRED", "MAY")


@dataclass(frozen=True, slots=True)
class Clause:
    """One normative rule, quoted verbatim from its source."""

    #: stable id, e.g. "RFD-INSERT-RESPOND"
    id: str
    #: "RFD", "2.4.0" or "JSON-RPC 2.0" (``jsonrpc.py``: a rule of requests and responses in general)
    source: str
    #: one of LEVELS
    level: str
    #: the RFD heading, or the schema $defs name (and variant), it sits under
    section: str
    #: the whole sentence, verbatim
    text: str
    #: empty when the model checks it; else one sentence: why it does not
    out_of_scope: str = ""
    #: empty when a rule of the transcript monitor (model/monitor/) judges it; else why no
    #: transcript can show it broken ("not on the wire: ..."; see WIRE_REASONS)
    wire: str = ""

    @property
    def in_scope(self) -> bool:
        return not self.out_of_scope
