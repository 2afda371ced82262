"""A v1 agent on the official Python SDK (PyPI ``agent-client-protocol`` 0.12.1), on stdio.

The SDK does the wire (framing, dispatch, pydantic models, error responses); this file
only decides what the agent says. It mirrors ``v1-agent.mjs`` (the TypeScript SDK's v1
agent) with two differences that exercise the bridge: it advertises no session/resume
and no session/close (the bridge loads without forwarding the replay, and answers
session/close itself), and its user-message echoes carry no ``messageId``.

    "fail ..."   echo, one agent chunk, then an error response (-32000) after the echo
    "slow ..."   echo, one agent chunk, a tool call, then wait for session/cancel; answer cancelled
    "reject"     an error response (-32602) before anything: rejected before insertion
    otherwise    echo, a tool call, a permission request, its result (a diff), an agent chunk, end_turn

``session/load`` replays every retained update before answering.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_tool_call,
    update_user_message,
)
from acp.interfaces import Client
from acp.schema import AgentCapabilities, Implementation, PermissionOption, PromptCapabilities, ToolCallUpdate


class Session:
    def __init__(self) -> None:
        self.history: list = []
        self.cancelled = asyncio.Event()


class PySdkAgent(Agent):
    _conn: Client

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.next = 0

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    def fresh(self, prefix: str) -> str:
        self.next += 1
        return f"{prefix}_{self.next}"

    async def say(self, session_id: str, update, keep: bool = True) -> None:
        if keep:
            self.sessions[session_id].history.append(update)
        await self._conn.session_update(session_id, update)

    def session(self, session_id: str) -> Session:
        if session_id not in self.sessions:
            raise RequestError(-32002, "Resource not found", {"sessionId": session_id})
        return self.sessions[session_id]

    async def initialize(self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs: Any):
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True, prompt_capabilities=PromptCapabilities(image=True)),
            agent_info=Implementation(name="v1-agent-py", title="v1 agent (Python SDK)", version="1.0.0"),
        )

    async def new_session(self, cwd: str, additional_directories=None, mcp_servers=None, **kwargs: Any):
        session_id = self.fresh("py_sess")
        self.sessions[session_id] = Session()
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, additional_directories=None, mcp_servers=None, **kwargs: Any):
        for update in self.session(session_id).history:
            await self.say(session_id, update, keep=False)
        return LoadSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        s = self.sessions.get(session_id)
        if s is not None:
            s.cancelled.set()  # the turn under way is cancelled, whatever it is doing now

    async def prompt(self, prompt: list, session_id: str, **kwargs: Any) -> PromptResponse:
        s = self.session(session_id)
        words = " ".join(getattr(block, "text", "") for block in prompt).removeprefix("/")
        s.cancelled.clear()
        if words.startswith("reject"):
            raise RequestError.invalid_params({"reason": "this agent rejects that prompt"})
        for block in prompt:
            await self.say(session_id, update_user_message(block))
        if words.startswith("fail"):
            await self.say(session_id, update_agent_message_text("Trying..."))
            raise RequestError.auth_required({"provider": "example"})
        if words.startswith("slow"):
            await self.say(session_id, update_agent_message_text("Working"))
            tool = self.fresh("py_tool")
            await self.say(session_id, start_tool_call(tool, "Long search", kind="search", status="in_progress"))
            try:
                await asyncio.wait_for(s.cancelled.wait(), 20)
            except asyncio.TimeoutError:
                pass
            await self.say(session_id, update_tool_call(tool, status="failed"))
            return PromptResponse(stop_reason="cancelled")
        tool = self.fresh("py_tool")
        await self.say(session_id, start_tool_call(tool, "Edit notes.txt", kind="edit", status="pending"))
        answer = await self._conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id=tool, title="Edit notes.txt", kind="edit", status="pending"),
            options=[
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
            ],
        )
        allowed = getattr(answer.outcome, "option_id", None) == "allow"
        content = [tool_diff_content("/tmp/project/notes.txt", "new\n", "old\n")] if allowed else [tool_content(text_block("denied"))]
        await self.say(session_id, update_tool_call(tool, status="completed" if allowed else "failed", content=content))
        await self.say(session_id, update_agent_message_text(f"You said: {words}"))
        return PromptResponse(stop_reason="end_turn")


async def main() -> None:
    await run_agent(PySdkAgent())


if __name__ == "__main__":
    asyncio.run(main())
