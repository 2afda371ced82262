"""Message shapes that differ between v1 and v2, translated field by field.

Pure functions, no bridge state: each takes the params or result of one side and
returns ``(the other side's value, notes)``, where ``notes`` are plain sentences
saying what could not cross (the bridge turns each into a problem at its line).
A value of ``None`` means nothing can be sent; the notes say why.

The shapes are those of ``schema/v1/schema.json`` and ``schema/v2/schema.json`` in
``@agentclientprotocol/sdk@2.4.0``. The prompt lifecycle itself (prompt, its
response, state, the user message) is the bridges' job, not this module's.
"""

from __future__ import annotations

import copy
import difflib
import json

V1_PROTOCOL = 1
V2_PROTOCOL = 2
#: Who the bridge says it is where a side requires an ``info`` the other side did not give.
BRIDGE_INFO = {"name": "acp-lifecycle-bridge", "title": "acp-lifecycle v1/v2 bridge", "version": "0.1.0"}

#: Requests and notifications each side's agent and client handle (schema ``x-method``/``x-side``).
V1_AGENT_METHODS = frozenset({
    "initialize", "authenticate", "logout", "session/new", "session/load", "session/list", "session/delete",
    "session/resume", "session/close", "session/set_mode", "session/set_config_option", "session/prompt",
    "session/cancel",
})
V2_AGENT_METHODS = frozenset({
    "initialize", "auth/login", "auth/logout", "session/new", "session/list", "session/delete", "session/resume",
    "session/close", "session/set_config_option", "session/prompt", "session/cancel", "tool_call/cancel",
    "terminal/cancel",
})
V1_CLIENT_METHODS = frozenset({
    "session/request_permission", "session/update", "fs/read_text_file", "fs/write_text_file", "terminal/create",
    "terminal/output", "terminal/release", "terminal/wait_for_exit", "terminal/kill", "elicitation/create",
    "elicitation/complete",
})
V2_CLIENT_METHODS = frozenset({"session/request_permission", "session/update", "elicitation/create", "elicitation/complete"})
#: The same request under another name on the other side: v2 name -> v1 name.
RENAMED = {"auth/login": "authenticate", "auth/logout": "logout"}
RENAMED_V1 = {v: k for k, v in RENAMED.items()}

V1_TOOL_STATUSES = ("pending", "in_progress", "completed", "failed")


def say(value) -> str:
    """A value as it appears on the wire, for a sentence (never a Python repr)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        text = "a value JSON cannot carry"
    return text if len(text) <= 80 else text[:77] + "..."


def a(word: str) -> str:
    """``word`` with its article, for sentences ("an agent_message", "a user_message")."""
    return f"{'an' if str(word)[:1] in 'aeioAEIO' else 'a'} {word}"


def _cp(value):
    """A copy of a JSON value (scalars as they are: nothing here mutates what it returns)."""
    return value if value is None or isinstance(value, (str, int, float, bool)) else copy.deepcopy(value)


def _obj(value) -> dict:
    return value if isinstance(value, dict) else {}


def _meta(src: dict, dst: dict) -> dict:
    if "_meta" in src:
        dst["_meta"] = copy.deepcopy(src["_meta"])
    return dst


# ---------------------------------------------------------------------------
# initialize
# ---------------------------------------------------------------------------


def init_request_to_v1(params: dict) -> tuple[dict, list[str]]:
    """A v2 client's ``initialize`` as the v1 agent receives it."""
    caps = _obj(params.get("capabilities"))
    out = {"protocolVersion": V1_PROTOCOL}
    if isinstance(params.get("info"), dict):
        out["clientInfo"] = copy.deepcopy(params["info"])
    # A v2 client has no file system or terminal methods: the v1 agent is told so.
    cc: dict = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
    if isinstance(_obj(caps.get("auth")).get("terminal"), dict):
        cc["auth"] = {"terminal": True}
    if isinstance(caps.get("elicitation"), dict):
        cc["elicitation"] = copy.deepcopy(caps["elicitation"])
    # Notices, config options and compaction are part of v2's stable surface.
    cc["session"] = {"notices": {}, "configOptions": {}, "compaction": {}}
    _meta(caps, cc)
    out["clientCapabilities"] = cc
    return _meta(params, out), []


def init_response_to_v2(result: dict) -> tuple[dict, list[str], dict]:
    """A v1 agent's ``initialize`` result as v2 clients receive it, and what the bridge
    needs to know of the v1 agent: ``{"load", "resume", "close", "list"}``."""
    notes = []
    caps = _obj(result.get("agentCapabilities"))
    sc = _obj(caps.get("sessionCapabilities"))
    pc = _obj(caps.get("promptCapabilities"))
    mc = _obj(caps.get("mcpCapabilities"))
    version = result.get("protocolVersion")
    if version != V1_PROTOCOL:
        notes.append(f"the v1 agent answered protocol version {say(version)}, not 1; the bridge speaks v1 to it regardless")
    known = {
        "load": caps.get("loadSession") is True,
        "resume": isinstance(sc.get("resume"), dict),
        "close": isinstance(sc.get("close"), dict),
        "list": isinstance(sc.get("list"), dict),
    }
    session: dict = {}
    prompt = {k: {} for k in ("image", "audio", "embeddedContext") if pc.get(k) is True}
    if prompt:
        session["prompt"] = prompt
    session["mcp"] = {"stdio": {}, **({"http": {}} if mc.get("http") is True else {})}
    if mc.get("sse") is True:
        notes.append("the v1 agent accepts SSE MCP servers, which v2 does not have; v2 clients are not offered them")
    for k in ("delete", "additionalDirectories"):
        if isinstance(sc.get(k), dict):
            session[k] = {}
    lacking = [m for m, have in (("session/list", known["list"]), ("session/close", known["close"])) if not have]
    if not known["resume"] and not known["load"]:
        lacking.append("session/resume")
    if lacking:
        notes.append(
            f"v2's session capability promises {', '.join(lacking)}, which the v1 agent does not advertise: "
            + ("the bridge cancels the session's work and answers session/close itself; " if not known["close"] else "")
            + "what the bridge cannot serve gets the v1 agent's own answer"
        )
    if caps.get("auth") and _obj(caps.get("auth")).get("logout") is not None:
        pass  # v2 advertises auth/logout by a non-empty authMethods list
    out: dict = {"protocolVersion": V2_PROTOCOL}
    if isinstance(result.get("agentInfo"), dict):
        out["info"] = copy.deepcopy(result["agentInfo"])
    else:
        out["info"] = dict(BRIDGE_INFO)
        notes.append("the v1 agent gave no agentInfo, which v2 requires; the bridge names itself")
    out["capabilities"] = _meta(caps, {"session": session, "auth": {}})
    methods, more = _auth_methods_to_v2(result.get("authMethods"))
    notes += more
    if methods is not None:
        out["authMethods"] = methods
    return _meta(result, out), notes, known


def init_request_to_v2(params: dict) -> tuple[dict, list[str]]:
    """A v1 client's ``initialize`` as the v2 agent receives it."""
    notes = []
    caps = _obj(params.get("clientCapabilities"))
    out: dict = {"protocolVersion": V2_PROTOCOL}
    if isinstance(params.get("clientInfo"), dict):
        out["info"] = copy.deepcopy(params["clientInfo"])
    else:
        out["info"] = dict(BRIDGE_INFO)
        notes.append("the v1 client gave no clientInfo, which v2 requires; the bridge names itself")
    offered = [name for name, on in (
        ("fs/read_text_file", _obj(caps.get("fs")).get("readTextFile") is True),
        ("fs/write_text_file", _obj(caps.get("fs")).get("writeTextFile") is True),
        ("terminal/*", caps.get("terminal") is True),
    ) if on]
    if offered:
        notes.append(f"the v1 client offers {', '.join(offered)}, which v2 agents cannot call (v2 has no client file system or terminal methods); not offered")
    cc: dict = {}
    if _obj(caps.get("auth")).get("terminal") is True:
        cc["auth"] = {"terminal": {}}
    if isinstance(caps.get("elicitation"), dict):
        cc["elicitation"] = copy.deepcopy(caps["elicitation"])
    out["capabilities"] = _meta(caps, cc)
    return _meta(params, out), notes


def init_response_to_v1(result: dict) -> tuple[dict, list[str]]:
    """A v2 agent's ``initialize`` result as the v1 client receives it."""
    notes = []
    version = result.get("protocolVersion")
    if version != V2_PROTOCOL:
        notes.append(f"the v2 agent answered protocol version {say(version)}, not 2; the bridge speaks v2 to it regardless")
    caps = _obj(result.get("capabilities"))
    session = caps.get("session")
    out: dict = {"protocolVersion": V1_PROTOCOL}
    if isinstance(result.get("info"), dict):
        out["agentInfo"] = copy.deepcopy(result["info"])
    ac: dict = {}
    if isinstance(session, dict):
        prompt, mcp = _obj(session.get("prompt")), _obj(session.get("mcp"))
        # session/load is session/resume with replay from the start, which v2's baseline has.
        ac["loadSession"] = True
        ac["promptCapabilities"] = {k: isinstance(prompt.get(k), dict) for k in ("image", "audio", "embeddedContext")}
        ac["mcpCapabilities"] = {"http": isinstance(mcp.get("http"), dict), "sse": False}
        if not isinstance(mcp.get("stdio"), dict):
            notes.append("the v2 agent does not advertise stdio MCP servers, which every v1 agent accepts; a v1 client's stdio servers are passed on and the agent may refuse them")
        sc = {"list": {}, "resume": {}, "close": {}}
        for k in ("delete", "additionalDirectories"):
            if isinstance(session.get(k), dict):
                sc[k] = {}
        ac["sessionCapabilities"] = sc
    out["agentCapabilities"] = _meta(caps, ac)
    methods, more = _auth_methods_to_v1(result.get("authMethods"))
    notes += more
    if methods is not None:
        out["authMethods"] = methods
    return _meta(result, out), notes


def _auth_methods_to_v2(methods) -> tuple[list | None, list[str]]:
    if not isinstance(methods, list):
        return None, []
    out, notes = [], []
    for m in methods:
        m = _obj(m)
        kind = m.get("type", "agent")
        if kind not in ("agent", "terminal") or "id" not in m:
            notes.append(f"the v1 auth method {say(m)} has no v2 form; not offered")
            continue
        new = {"type": kind, "methodId": m["id"]}
        new.update({k: copy.deepcopy(v) for k, v in m.items() if k not in ("type", "id", "env")})
        if kind == "terminal" and isinstance(m.get("env"), dict):
            new["env"] = [{"name": k, "value": v} for k, v in m["env"].items()]
        out.append(new)
    return out, notes


def _auth_methods_to_v1(methods) -> tuple[list | None, list[str]]:
    if not isinstance(methods, list):
        return None, []
    out, notes = [], []
    for m in methods:
        m = _obj(m)
        kind = m.get("type")
        if kind not in ("agent", "terminal") or "methodId" not in m:
            notes.append(f"the v2 auth method {say(m)} has no v1 form; not offered")
            continue
        new = {"id": m["methodId"]}
        if kind == "terminal":
            new["type"] = "terminal"
        new.update({k: copy.deepcopy(v) for k, v in m.items() if k not in ("type", "methodId", "env")})
        if kind == "terminal" and isinstance(m.get("env"), list):
            new["env"] = {e.get("name"): e.get("value") for e in m["env"] if isinstance(e, dict)}
        out.append(new)
    return out, notes


# ---------------------------------------------------------------------------
# Session setup
# ---------------------------------------------------------------------------


def mcp_servers_to_v1(servers) -> tuple[list, list[str]]:
    out, notes = [], []
    for s in servers if isinstance(servers, list) else []:
        s = _obj(s)
        kind = s.get("type")
        if kind == "stdio":
            new = {k: copy.deepcopy(v) for k, v in s.items() if k != "type"}
            new.setdefault("args", [])
            new.setdefault("env", [])
        elif kind == "http":
            new = copy.deepcopy(s)
            new.setdefault("headers", [])
        else:
            notes.append(f"the MCP server {say(s.get('name'))} uses transport {say(kind)}, which v1 does not have; not passed on")
            continue
        out.append(new)
    return out, notes


def mcp_servers_to_v2(servers) -> tuple[list, list[str]]:
    out, notes = [], []
    for s in servers if isinstance(servers, list) else []:
        s = _obj(s)
        kind = s.get("type")
        if kind is None:
            out.append({"type": "stdio", **copy.deepcopy(s)})
        elif kind == "http":
            out.append(copy.deepcopy(s))
        else:
            notes.append(f"the MCP server {say(s.get('name'))} uses transport {say(kind)}, which v2 does not have; not passed on")
    return out, notes


def session_request_to_v1(params: dict, method: str) -> tuple[dict, list[str]]:
    """``session/new``, ``session/load`` or ``session/resume`` params for a v1 agent (from v2)."""
    out = {k: copy.deepcopy(v) for k, v in params.items() if k not in ("mcpServers", "replayFrom")}
    servers, notes = mcp_servers_to_v1(params.get("mcpServers"))
    if servers or method in ("session/new", "session/load"):
        out["mcpServers"] = servers  # required in v1's session/new and session/load
    return out, notes


def session_request_to_v2(params: dict) -> tuple[dict, list[str]]:
    """``session/new``, ``session/load`` or ``session/resume`` params for a v2 agent (from v1)."""
    out = {k: copy.deepcopy(v) for k, v in params.items() if k != "mcpServers"}
    servers, notes = mcp_servers_to_v2(params.get("mcpServers"))
    if servers or "mcpServers" in params:
        out["mcpServers"] = servers
    return out, notes


def config_options_to_v2(options) -> tuple[list, list[str]]:
    out, notes = [], []
    for o in options if isinstance(options, list) else []:
        o = copy.deepcopy(_obj(o))
        if "id" in o:
            o["configId"] = o.pop("id")
        opts = o.get("options")
        if isinstance(opts, list):
            for g in opts:
                if isinstance(g, dict) and "group" in g:
                    g["groupId"] = g.pop("group")
            if not opts:
                notes.append(f"the config option {say(o.get('configId'))} offers no values, which v2 does not allow; not passed on")
                continue
        out.append(o)
    return out, notes


def config_options_to_v1(options) -> tuple[list, list[str]]:
    out, notes = [], []
    for o in options if isinstance(options, list) else []:
        o = copy.deepcopy(_obj(o))
        if o.get("type") not in ("select", "boolean"):
            notes.append(f"the config option {say(o.get('configId'))} has type {say(o.get('type'))}, which v1 does not have; not passed on")
            continue
        if "configId" in o:
            o["id"] = o.pop("configId")
        for g in o.get("options") if isinstance(o.get("options"), list) else []:
            if isinstance(g, dict) and "groupId" in g:
                g["group"] = g.pop("groupId")
        out.append(o)
    return out, notes


def session_result_to_v2(result: dict) -> tuple[dict, list[str]]:
    """The result of ``session/new``, ``session/load`` or ``session/resume`` for v2 clients."""
    notes = []
    out = {k: copy.deepcopy(v) for k, v in result.items() if k not in ("modes", "configOptions")}
    if result.get("modes") is not None:
        current = _obj(result["modes"]).get("currentModeId")
        notes.append(f"the v1 agent's session modes (current mode {say(current)}) have no v2 counterpart (v2 uses config options); not passed on")
    if isinstance(result.get("configOptions"), list):
        out["configOptions"], more = config_options_to_v2(result["configOptions"])
        notes += more
    return out, notes


def session_result_to_v1(result: dict) -> tuple[dict, list[str], list | None]:
    """The result of ``session/new`` or ``session/resume`` for a v1 client, and the
    available commands (v1 has them only as an update, which the bridge sends next)."""
    notes = []
    out = {k: copy.deepcopy(v) for k, v in result.items() if k not in ("configOptions", "availableCommands")}
    if isinstance(result.get("configOptions"), list):
        out["configOptions"], more = config_options_to_v1(result["configOptions"])
        notes += more
    commands = None
    if isinstance(result.get("availableCommands"), list):
        commands, more = commands_to_v1(result["availableCommands"])
        notes += more
    return out, notes, commands


def set_config_to_v1(params: dict) -> tuple[dict | None, list[str]]:
    out = copy.deepcopy(params)
    if out.get("type") == "id":
        del out["type"]
    elif out.get("type") != "boolean":
        return None, [f"session/set_config_option with value type {say(out.get('type'))}, which v1 does not have"]
    return out, []


def set_config_to_v2(params: dict) -> tuple[dict, list[str]]:
    out = copy.deepcopy(params)
    if "type" not in out:
        out = {"sessionId": out.get("sessionId"), "configId": out.get("configId"), "type": "id",
               **{k: v for k, v in out.items() if k not in ("sessionId", "configId")}}
    return out, []


# ---------------------------------------------------------------------------
# Permission requests
# ---------------------------------------------------------------------------


def permission_to_v2(params: dict, title: str | None) -> tuple[dict | None, list[str]]:
    """A v1 agent's ``session/request_permission`` for v2 clients; ``title`` is the tool
    call's title as the bridge last saw it."""
    tool = _obj(params.get("toolCall"))
    options = params.get("options")
    if not isinstance(options, list) or not options:
        return None, ["a permission request without options, which v2 does not allow; the bridge answers it cancelled"]
    tool_update, notes = tool_update_to_v2({"sessionUpdate": "tool_call_update", **tool})
    tool_update.pop("sessionUpdate", None)
    name = tool.get("title") if isinstance(tool.get("title"), str) else title
    out = {
        "sessionId": params.get("sessionId"),
        "title": name if isinstance(name, str) and name else f"Allow tool call {tool.get('toolCallId')}",
        "subject": {"type": "tool_call", "toolCall": tool_update},
        "options": copy.deepcopy(options),
    }
    return _meta(params, out), notes


def permission_to_v1(params: dict, serial: int) -> tuple[dict, list[str]]:
    """A v2 agent's ``session/request_permission`` for a v1 client."""
    notes = []
    subject = _obj(params.get("subject"))
    title = params.get("title")
    if subject.get("type") == "tool_call" and isinstance(subject.get("toolCall"), dict):
        tool, more = tool_update_to_v1({"sessionUpdate": "tool_call_update", **subject["toolCall"]}, None)
        notes += more
        tool = tool or {"toolCallId": subject["toolCall"].get("toolCallId")}
        tool.pop("sessionUpdate", None)
        if "title" not in tool and isinstance(title, str):
            tool["title"] = title
        elif isinstance(title, str) and tool.get("title") != title:
            notes.append(f"the permission title {say(title)} differs from its tool call's; v1 shows the tool call")
    else:
        tool = {"toolCallId": f"bridge_permission_{serial}", "title": title if isinstance(title, str) else "Permission"}
        what = f"a {say(subject.get('type'))} subject" if subject else "no subject"
        notes.append(f"a permission request with {what}: v1 asks permission only for a tool call, so the v1 client sees a tool call the agent never reported")
    if params.get("description"):
        notes.append(f"the permission description {say(params['description'])} has no v1 field; not shown")
    out = {"sessionId": params.get("sessionId"), "toolCall": tool, "options": copy.deepcopy(params.get("options"))}
    return _meta(params, out), notes


def permission_result_to_v1(result: dict) -> tuple[dict, list[str]]:
    outcome = _obj(result.get("outcome"))
    if outcome.get("outcome") in ("selected", "cancelled"):
        return copy.deepcopy(result), []
    return _meta(result, {"outcome": {"outcome": "cancelled"}}), [
        f"the permission outcome {say(outcome.get('outcome'))} has no v1 value; the v1 agent is told cancelled"]


# ---------------------------------------------------------------------------
# Session updates other than messages and state
# ---------------------------------------------------------------------------


def _unified(path: str, old: str | None, new: str) -> str:
    a = [] if old is None else old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = f"diff --git a{path} b{path}\n" if path.startswith("/") else f"diff --git a/{path} b/{path}\n"
    body = "".join(difflib.unified_diff(a, b, "/dev/null" if old is None else f"a{path}", f"b{path}"))
    return head + body


def tool_content_to_v2(items) -> tuple[list, list[str]]:
    out, notes = [], []
    for item in items if isinstance(items, list) else []:
        item = _obj(item)
        if item.get("type") == "diff":
            path, old, new = item.get("path"), item.get("oldText"), item.get("newText")
            if not isinstance(path, str) or not isinstance(new, str):
                notes.append(f"a diff without a path or new text ({say(item)}); not passed on")
                continue
            out.append(_meta(item, {
                "type": "diff",
                "changes": [{"operation": "add" if old is None else "modify", "path": path, "fileType": "text"}],
                "patch": {"format": "git_patch", "text": _unified(path, old, new)},
            }))
        else:
            out.append(copy.deepcopy(item))
    return out, notes


def tool_content_to_v1(items) -> tuple[list, list[str]]:
    out, notes = [], []
    for item in items if isinstance(items, list) else []:
        item = _obj(item)
        if item.get("type") in ("content", "terminal"):
            out.append(copy.deepcopy(item))
        elif item.get("type") == "diff":
            paths = [c.get("path") for c in item.get("changes") or [] if isinstance(c, dict)]
            notes.append(f"a diff of {', '.join(say(p) for p in paths) or 'no file'}: v1 diffs carry the old and new text, which a v2 diff does not; not passed on")
        else:
            notes.append(f"tool call content of type {say(item.get('type'))}, which v1 does not have; not passed on")
    return out, notes


def tool_update_to_v2(update: dict) -> tuple[dict, list[str]]:
    """A v1 ``tool_call`` or ``tool_call_update`` as a v2 ``tool_call_update`` (an upsert)."""
    notes = []
    out = {"sessionUpdate": "tool_call_update"}
    for k, v in update.items():
        if k == "sessionUpdate":
            continue
        if k == "content" and v is not None:
            out[k], more = tool_content_to_v2(v)
            notes += more
        elif k == "locations" and isinstance(v, list):
            locs = []
            for loc in v:
                loc = copy.deepcopy(_obj(loc))
                if loc.get("line") == 0:
                    del loc["line"]
                    notes.append(f"a location in {say(loc.get('path'))} on line 0, which v2 does not have (lines start at 1); passed on without its line")
                locs.append(loc)
            out[k] = locs
        else:
            out[k] = _cp(v)
    return out, notes


def tool_update_to_v1(update: dict, known: bool | None) -> tuple[dict | None, list[str]]:
    """A v2 ``tool_call_update`` as v1 sees it: a ``tool_call`` when the v1 client has not
    seen the tool call (``known`` False), else a ``tool_call_update`` (None: either)."""
    notes = []
    out: dict = {"sessionUpdate": "tool_call_update" if known in (True, None) else "tool_call"}
    for k, v in update.items():
        if k == "sessionUpdate":
            continue
        if k == "content" and v is not None:
            out[k], more = tool_content_to_v1(v)
            notes += more
        elif k == "status" and v is not None and v not in V1_TOOL_STATUSES:
            mapped = {"cancelled": "failed", "paused": "in_progress"}.get(v)
            if mapped:
                out[k] = mapped
                notes.append(f"tool call status {say(v)}, which v1 does not have; passed on as {say(mapped)}")
            else:
                notes.append(f"tool call status {say(v)}, which v1 does not have; status not passed on")
        elif k == "capabilities":
            if v:
                notes.append(f"the tool call's capabilities {say(v)} (tool_call/cancel) have no v1 counterpart; not passed on")
        elif v is None and k in ("kind", "status", "title"):
            notes.append(f"a tool call update that resets {k} (null), which v1 cannot express; not passed on")
        else:
            out[k] = _cp(v)
    if out["sessionUpdate"] == "tool_call" and not isinstance(out.get("title"), str):
        out["title"] = out["name"] if isinstance(out.get("name"), str) else str(out.get("toolCallId"))
    return out, notes


def commands_to_v2(commands) -> tuple[list, list[str]]:
    out = []
    for c in commands if isinstance(commands, list) else []:
        c = copy.deepcopy(_obj(c))
        new = {"type": "command", **c}
        inp = c.get("input")
        if isinstance(inp, dict) and "type" not in inp:
            new["input"] = {"type": "text", **inp}
        out.append(new)
    return out, []


def commands_to_v1(commands) -> tuple[list, list[str]]:
    out, notes = [], []
    for c in commands if isinstance(commands, list) else []:
        c = copy.deepcopy(_obj(c))
        if c.get("type") != "command":
            notes.append(f"the command {say(c.get('name'))} has type {say(c.get('type'))}, which v1 does not have; not passed on")
            continue
        del c["type"]
        inp = c.get("input")
        if isinstance(inp, dict):
            if inp.get("type") == "text":
                c["input"] = {k: v for k, v in inp.items() if k != "type"}
            else:
                c.pop("input")
                notes.append(f"the command {say(c.get('name'))} takes input of type {say(inp.get('type'))}, which v1 does not have; passed on without it")
        out.append(c)
    return out, notes


def update_to_v2(update: dict) -> tuple[dict | None, list[str]]:
    """A v1 session update (other than messages and the prompt lifecycle) for v2 clients."""
    kind = update.get("sessionUpdate")
    if kind in ("tool_call", "tool_call_update"):
        return tool_update_to_v2(update)
    if kind == "plan":
        return _meta(update, {"sessionUpdate": "plan_update", "plan": {
            "type": "items", "planId": "plan", "entries": copy.deepcopy(update.get("entries"))}}), []
    if kind == "available_commands_update":
        commands, notes = commands_to_v2(update.get("availableCommands"))
        return _meta(update, {"sessionUpdate": kind, "availableCommands": commands}), notes
    if kind == "config_option_update":
        options, notes = config_options_to_v2(update.get("configOptions"))
        return _meta(update, {"sessionUpdate": kind, "configOptions": options}), notes
    if kind == "current_mode_update":
        return None, [f"a current_mode_update (mode {say(update.get('currentModeId'))}): v2 has no session modes; not forwarded"]
    return update, []  # the same in both versions (shared: the bridge never mutates a message)


def update_to_v1(update: dict, tools: dict) -> tuple[dict | None, list[str]]:
    """A v2 session update (other than messages and state) for a v1 client; ``tools``
    (tool call id -> the content the v1 client holds) is updated."""
    kind = update.get("sessionUpdate")
    if kind == "tool_call_update":
        tid = update.get("toolCallId")
        out, notes = tool_update_to_v1(update, tid in tools)
        if isinstance(out.get("content"), list):
            tools[tid] = list(out["content"])
        else:
            tools.setdefault(tid, [])
        return out, notes
    if kind == "tool_call_content_chunk":
        tid = update.get("toolCallId")
        items, notes = tool_content_to_v1([update.get("content")])
        if not items:
            return None, notes
        known = tid in tools
        held = tools.setdefault(tid, []) + items
        tools[tid] = held
        # v1 replaces a tool call's content as a whole: send all of it again.
        out = {"sessionUpdate": "tool_call_update" if known else "tool_call", "toolCallId": tid, "content": copy.deepcopy(held)}
        if not known:
            out["title"] = str(tid)
            notes.append(f"content for tool call {say(tid)}, which the v1 client has not seen: it appears with its ID as title")
        return _meta(update, out), notes
    if kind == "plan_update":
        plan = _obj(update.get("plan"))
        if plan.get("type") != "items":
            return None, [f"a plan update of type {say(plan.get('type'))}, which v1 does not have; not forwarded"]
        return _meta(update, {"sessionUpdate": "plan", "entries": copy.deepcopy(plan.get("entries"))}), []
    if kind == "available_commands_update":
        commands, notes = commands_to_v1(update.get("availableCommands"))
        return _meta(update, {"sessionUpdate": kind, "availableCommands": commands}), notes
    if kind == "config_option_update":
        options, notes = config_options_to_v1(update.get("configOptions"))
        return _meta(update, {"sessionUpdate": kind, "configOptions": options}), notes
    if kind in ("terminal_update", "terminal_output_chunk"):
        return None, [f"{a(kind)}: v1 terminals belong to the client, so a v2 agent's terminal has no v1 counterpart; not forwarded"]
    if kind in ("session_info_update", "usage_update", "notice", "compaction_update", "compaction_summary_chunk"):
        return update, []  # the same in both versions (shared: the bridge never mutates a message)
    return None, [f"{a(say(kind))} update has no v1 counterpart; not forwarded"]


# ---------------------------------------------------------------------------
# A client's message in the other version (the transcript converter's view)
# ---------------------------------------------------------------------------


def client_message(msg: dict, to: str) -> dict:
    """A client's request or notification as a client of version ``to`` would send it.

    A live bridge receives its clients' messages in their own version. A transcript of
    the agent's side has them in the agent's version, so the converter (``bridge
    --to``) lifts each client line into the clients' version first; the bridge then
    carries it back. Responses and unknown methods are unchanged.
    """
    if not isinstance(msg, dict) or not isinstance(msg.get("method"), str) or not isinstance(msg.get("params", {}), dict):
        return msg
    method, params = msg["method"], msg.get("params") or {}
    new = None
    if to == "v2":
        if method == "initialize":
            new, _ = init_request_to_v2(params)
        elif method in ("session/new", "session/resume"):
            new, _ = session_request_to_v2(params)
        elif method == "session/load":
            new, _ = session_request_to_v2(params)
            new["replayFrom"] = {"type": "start"}
            method = "session/resume"
        elif method == "session/set_config_option":
            new, _ = set_config_to_v2(params)
        elif method in RENAMED_V1:
            method = RENAMED_V1[method]
    elif to == "v1":
        if method == "initialize":
            new = {"protocolVersion": V1_PROTOCOL, **({"clientInfo": params["info"]} if "info" in params else {})}
        elif method in ("session/new", "session/resume"):
            replay = params.get("replayFrom") is not None
            if method == "session/resume" and replay:
                method = "session/load"
            new, _ = session_request_to_v1(params, method)
        elif method == "session/set_config_option":
            new = set_config_to_v1(params)[0] or params
        elif method in RENAMED:
            method = RENAMED[method]
    if new is None and method == msg["method"]:
        return msg
    out = dict(msg, method=method)
    if new is not None:
        out["params"] = new
    return out
