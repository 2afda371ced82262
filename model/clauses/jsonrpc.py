"""The JSON-RPC 2.0 specification's sentences the model relies on (source ``"JSON-RPC 2.0"``).

ACP is JSON-RPC 2.0: a rule about requests and responses in general (one reply to a call) is that
specification's, not the RFD's or the schema's; a finding about such a case quotes it. Read from
https://www.jsonrpc.org/specification (2013-01-04) once, when this file was written (Rule 2 of
``_clause.py``). Section: its numbered heading.
"""

from __future__ import annotations

from ._clause import Clause

__all__ = ["JSONRPC"]

JSONRPC: tuple[Clause, ...] = (
    Clause(
        "JSONRPC-REPLY",
        "JSON-RPC 2.0",
        "MUST",
        "5 Response object",
        "When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.",
    ),
)
