"""The probe's ACP v2 client, for ``probe --live``: the same scenarios, through ``bridge serve --to v2``.

``V2Session`` is ``AgentSession`` (client.py) speaking v2 to a v1 agent behind
the project's live bridge: ``initialize`` with protocol version 2, ``auth/login``
for v1's ``authenticate``. In v2 a ``session/prompt`` is answered at once with a
``messageId`` (when the bridge inserted it) and the turn ends with an idle
``state_update``; so that the scenarios read v2 as they read v1, a prompt counts
as answered (``responses``) at that idle, with its stop reason, or at an error
response. Tool calls are ``tool_call_update``s (v2 has no ``tool_call``); a
``$/cancel_request`` for a pending permission request is kept like v1's, and
``cancel-permission-wait`` answers such a request -32800.
"""

from __future__ import annotations

from .client import AgentSession

__all__ = ["V2Session"]


class V2Session(AgentSession):
    AUTHENTICATE = "auth/login"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.accepted: dict = {}  # prompt id -> the messageId the agent answered it with
        self.prompts: list[int] = []

    def initialize_params(self) -> dict:
        return {"protocolVersion": 2, "info": {"name": "acp-lifecycle-probe", "version": "0.1.0"}, "capabilities": {}}

    def resume_unknown(self) -> int | None:
        """``session/resume`` (v2's baseline, without replay) of a session the agent never made."""
        from .client import UNKNOWN_SESSION

        return self.request("session/resume", {"sessionId": UNKNOWN_SESSION, "cwd": self.cwd})

    def prompt(self, text: str) -> int:
        rid = super().prompt(text)
        self.prompts.append(rid)
        return rid

    def _handle(self, msg: dict) -> None:
        if "method" not in msg and msg.get("id") in self.prompts:
            if isinstance(msg.get("result"), dict):
                self.accepted[msg["id"]] = msg["result"].get("messageId")
            else:
                self.responses[msg["id"]] = msg
            return
        super()._handle(msg)
        update = ((msg.get("params") or {}).get("update") or {}) if msg.get("method") == "session/update" else {}
        if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
            ended = {"stopReason": update.get("stopReason")}
            if "error" in update:
                ended["error"] = update["error"]
            for rid in self.accepted:
                self.responses.setdefault(rid, {"jsonrpc": "2.0", "id": rid, "result": ended})

    def saw_update(self, kind: str, since: int = 0) -> bool:
        kinds = {"tool_call", "tool_call_update"} if kind == "tool_call" else {kind}
        return any((u.get("update") or {}).get("sessionUpdate") in kinds for u in self.updates[since:])
