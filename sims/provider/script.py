"""What the scripted provider answers: turns chosen by keywords in the prompt.

A *turn* is one way of answering a model call: text in chunks, a tool call,
slow chunks, a failure before any output (an HTTP status) or in the middle of
the stream (the connection breaks). The provider picks the turn from the text
of the last user message that holds text: the first turn whose ``match``
string occurs in it, else the ``default`` turn. A request whose last message
carries a tool result is answered with the ``after_tool`` turn (the model
"reads" the result and ends its turn).

Built-in keywords: ``[tool]``, ``[slow]``, ``[fail-401]``, ``[fail-500]``,
``[overloaded]`` (HTTP 529, Anthropic's overloaded status; the other APIs get
the same status), ``[fail-midstream]``. A script file (JSON) adds turns in front
of them or replaces one of the same name::

    {"turns": [{"name": "long", "match": "[long]", "chunks": ["a", "b"], "delay": 0.2}]}

Fields of a turn: ``name``, ``match`` (a substring of the prompt), ``chunks``
(text pieces, streamed one per event), ``delay`` (seconds before each chunk),
``tool`` (true: call a tool the request offers, preferring a shell tool),
``status`` (an HTTP status sent before any output), ``break_after`` (the
number of chunks sent before the connection is cut).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

__all__ = ["Turn", "Script", "ScriptError", "BUILTIN", "schema_value", "pick_tool", "tool_arguments"]

PROBE_COMMAND = "touch acp-probe.txt"  # writes: agents ask before running it (they allow echo silently)


class ScriptError(ValueError):
    """An unusable script file (one line)."""


@dataclass(frozen=True)
class Turn:
    name: str
    match: str | None = None
    chunks: tuple[str, ...] = ("Hello", " from the", " scripted", " provider.")
    delay: float = 0.0
    tool: bool = False
    status: int | None = None
    break_after: int | None = None

    @property
    def text(self) -> str:
        return "".join(self.chunks)


_SLOW = tuple(f"slow chunk {i}. " for i in range(1, 41))

BUILTIN: tuple[Turn, ...] = (
    Turn("tool", "[tool]", chunks=("I will run a command.",), tool=True),
    Turn("slow", "[slow]", chunks=_SLOW, delay=0.5),
    Turn("fail-401", "[fail-401]", status=401),
    Turn("fail-500", "[fail-500]", status=500),
    Turn("overloaded", "[overloaded]", status=529),
    Turn("fail-midstream", "[fail-midstream]", chunks=("Partial", " answer", " that", " never", " ends."), delay=0.2,
         break_after=2),
)
DEFAULT = Turn("text")
AFTER_TOOL = Turn("after-tool", chunks=("The command", " ran."))


@dataclass
class Script:
    turns: tuple[Turn, ...] = BUILTIN
    default: Turn = DEFAULT
    after_tool: Turn = AFTER_TOOL
    names: dict = field(default_factory=dict)

    def choose(self, prompt: str, after_tool_result: bool) -> Turn:
        if after_tool_result:
            # A failing prompt keeps failing after a tool (an outage hits every call).
            for t in self.turns:
                if t.match and t.match in prompt and (t.status or t.break_after is not None):
                    return t
            return self.after_tool
        for t in self.turns:
            if t.match and t.match in prompt:
                return t
        return self.default

    @classmethod
    def load(cls, path: str | Path) -> "Script":
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as e:
            raise ScriptError(f"{path}: cannot read: {e.strerror or e}") from None
        except (ValueError, UnicodeDecodeError) as e:
            raise ScriptError(f"{path}: not JSON ({e})") from None
        except RecursionError:
            raise ScriptError(f"{path}: JSON nested too deeply") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("turns"), list):
            raise ScriptError(f'{path}: expected {{"turns": [...]}}')
        added = [_turn(path, i, t) for i, t in enumerate(doc["turns"])]
        names = {t.name for t in added}
        default = next((t for t in added if t.name == "text"), DEFAULT)
        after = next((t for t in added if t.name == "after-tool"), AFTER_TOOL)
        kept = tuple(t for t in BUILTIN if t.name not in names)
        return cls(tuple(t for t in added if t.match) + kept, default, after)


def _turn(path, i: int, raw) -> Turn:
    where = f"{path}: turn {i + 1}"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ScriptError(f"{where}: a turn is an object with a name")
    known = {f.name for f in fields(Turn)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ScriptError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(sorted(known))})")
    chunks = raw.get("chunks", list(DEFAULT.chunks))
    if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks):
        raise ScriptError(f"{where}: chunks must be a list of strings")
    for key, kind in (("match", str), ("delay", (int, float)), ("tool", bool), ("status", int), ("break_after", int)):
        if raw.get(key) is not None and not isinstance(raw[key], kind):
            raise ScriptError(f"{where}: {key} has the wrong type")
    if raw.get("status") is not None and not 400 <= raw["status"] <= 599:
        raise ScriptError(f"{where}: status must be an HTTP error status (400-599)")
    if not 0 <= float(raw.get("delay", 0)) <= 30:
        raise ScriptError(f"{where}: delay must be between 0 and 30 seconds")
    return Turn(raw["name"], raw.get("match"), tuple(chunks), float(raw.get("delay", 0)), bool(raw.get("tool", False)),
                raw.get("status"), raw.get("break_after"))


# ---------------------------------------------------------------------------
# Tools and JSON answers
# ---------------------------------------------------------------------------

_SHELL_NAMES = ("bash", "run_shell_command", "shell", "terminal", "exec", "command")


def pick_tool(tools: list[tuple[str, dict]]) -> tuple[str, dict] | None:
    """The tool to call among ``(name, input schema)``: a shell tool when there is one."""
    if not tools:
        return None
    for wanted in _SHELL_NAMES:
        for name, schema in tools:
            if name.lower() == wanted or name.lower().endswith("__" + wanted):
                return name, schema
    for name, schema in tools:
        if "shell" in name.lower() or "bash" in name.lower():
            return name, schema
    return tools[0]


#: Arguments a shell tool may declare without requiring them: the command itself under another
#: name, and what asks the agent for the permission the command needs (codex's exec_command:
#: ``sandbox_permissions: "require_escalated"`` with a ``justification``).
_COMMAND_KEYS = ("command", "cmd")
_ESCALATE = ("require_escalated", "escalated", "ask", "on-request")
JUSTIFICATION = "The acp-lifecycle probe asks to run this command (it writes a file)."


def tool_arguments(schema: dict) -> dict:
    """Arguments for a tool call: every required field filled, the command (``command``, ``cmd``;
    a string, or an argv list) a harmless touch in the working directory, and the sandbox
    escalation the schema offers requested, so that the agent asks permission before running it."""
    schema = schema if isinstance(schema, dict) else {}
    value = schema_value(schema, required_only=True)
    args = value if isinstance(value, dict) else {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    for key in _COMMAND_KEYS:
        if key in props and key not in args:
            args[key] = schema_value(props[key], True, 1, key)
            break
    asked = False
    for key, prop in props.items():
        if not isinstance(prop, dict):
            continue
        enum = prop.get("enum") if isinstance(prop.get("enum"), list) else []
        wanted = next((e for e in _ESCALATE if e in enum), None)
        if wanted is not None and ("sandbox" in key or "permission" in key or "approval" in key):
            args[key], asked = wanted, True
        elif prop.get("type") == "boolean" and "escalat" in key:
            args[key], asked = True, True
    if asked and isinstance(props.get("justification"), dict):
        args["justification"] = JUSTIFICATION
    return args


def schema_value(schema: dict, required_only: bool = False, depth: int = 0, key: str = ""):
    """A small value that fits a JSON schema (what a helper call asking for JSON gets back).

    An enum prefers ``"user"`` (gemini-cli's next-speaker check then stops), a
    string named ``command`` is ``touch acp-probe.txt``."""
    if depth > 8 or not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "user" if "user" in enum else enum[0]
    for alt in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(alt), list) and schema[alt]:
            return schema_value(schema[alt][0], required_only, depth + 1, key)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    kind = kind.lower() if isinstance(kind, str) else ("object" if "properties" in schema else "string")
    if kind == "object":
        props = schema.get("properties") or {}
        wanted = schema.get("required") or ([] if required_only else list(props))
        return {k: schema_value(props.get(k, {}), required_only, depth + 1, k) for k in wanted if isinstance(k, str)}
    if kind == "array":
        if key in _COMMAND_KEYS:  # an argv (codex's shell tool): the command through a shell
            return ["bash", "-lc", PROBE_COMMAND]
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)  # a count or a score (gemini-cli wants 1-100)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if key in _COMMAND_KEYS:
        return PROBE_COMMAND
    if key in ("file_path", "path", "absolute_path"):
        return "/dev/null"
    return "scripted"
