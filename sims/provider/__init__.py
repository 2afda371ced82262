"""A scripted model provider: a local stand-in for the model APIs published agents call.

``Provider`` (server.py) answers Anthropic Messages, OpenAI Chat Completions
and Responses, and Gemini generateContent calls on 127.0.0.1, streaming or not,
with the turn a ``Script`` (script.py) picks from keywords in the prompt:
text in chunks, a tool call, slow chunks, a failure before any output or in
the middle of the stream. ``acp-lifecycle provider`` runs it on its own;
``acp-lifecycle probe`` starts one for each agent run (docs/probe.md).
"""

from .script import BUILTIN, Script, ScriptError, Turn
from .server import Provider

__all__ = ["Provider", "Script", "ScriptError", "Turn", "BUILTIN"]
