"""Runnable v1 <-> v2 bridges for the ACP prompt lifecycle, as stateful functions over JSON-RPC.

Two bridges, each fed transcript entries (``{"conn", "from", "msg"}``, see
``sims.wire.transcript``) in the order observed, each returning the entries the
other side sees:

* ``V1AgentToV2Client``: a v1 agent behind, v2 clients in front. It picks its
  insertion point (the first evidence the v1 agent took the prompt, or at once), answers the
  v2 ``session/prompt`` there with ``{"messageId"}``, reports ``running`` when
  the v1 turn is under way and turns the v1 response into the idle
  ``state_update`` (a v1 error after insertion into an idle ``error``).
* ``V2AgentToV1Client``: a v2 agent behind, a v1 client in front. It holds the
  v1 ``session/prompt`` open until the idle that ends the work, and turns that
  idle into the v1 response: a ``stopReason`` result, or a JSON-RPC error for
  the ``error`` stop reason.

The RFD's rule ("Report failures after insertion"):

    A bridge from a v1 Agent to a v2 Client maps an error response that arrives
    after the bridge reported the message inserted to an idle state_update with
    the error stop reason and the same error object. A bridge from a v2 Agent to
    a v1 Client maps that update to an error response for the pending v1 prompt,
    using -32603 (internal error) when error is absent.

Whatever a bridge cannot carry to the other side is a *problem*:
``(line, message)`` with the input line, and a ``kind`` (the open question it
belongs to). Nothing is dropped without a problem, except what carries no
information: the v2 ``{messageId}`` result a v1 client has no field for (the
bridge keeps the association), ``running`` while a v1 prompt is open (the open
request is v1's running state), a repeated idle snapshot while one is open, a
whole-message update whose content is exactly what the v1 client already holds,
and a tool update repeating the ``failed`` status the bridge already sent.

``bridge_transcript`` runs a bridge over a parsed transcript; ``bridge_file``
and ``bridge_command`` are what ``acp-lifecycle bridge`` calls. The bridge
properties (``PROPERTIES``) and the exhaustive check against the model
(``explore_bridge``) are at the end; docs/bridges.md explains all of it.
"""

from __future__ import annotations

from .core import OPEN_QUESTIONS, Out, Problem
from .explore import BridgeExploration, explore_bridge, model_transcripts
from .properties import BRIDGE_BUGS, BY_ID, PROPERTIES, BridgeProperty, check_properties
from .run import BridgeRun, bridge_command, bridge_file, bridge_transcript, make_bridge, run_bridge
from .v1_to_v2 import V1AgentToV2Client
from .v2_to_v1 import V2AgentToV1Client
from .view import client_view, compact

__all__ = [
    "Problem",
    "Out",
    "V1AgentToV2Client",
    "V2AgentToV1Client",
    "BridgeRun",
    "run_bridge",
    "bridge_transcript",
    "bridge_file",
    "bridge_command",
    "BridgeProperty",
    "PROPERTIES",
    "BY_ID",
    "check_properties",
    "BRIDGE_BUGS",
    "OPEN_QUESTIONS",
    "BridgeExploration",
    "make_bridge",
    "model_transcripts",
    "explore_bridge",
    "client_view",
    "compact",
]
