"""The official ACP v2 JSON schema: fetch it, find it, validate wire messages against it.

The schema is ``schema/v2/schema.json`` of the npm package
``@agentclientprotocol/sdk@2.4.0`` (JSON Schema draft 2020-12), fetched,
pinned and cached by ``sims.wire.schema_source`` (``pull``, ``locate``,
``cache_path``: re-exported here). The v1 schema of the same package validates
the v1 side of a bridge; ``Validator`` reads either.

Validating a whole message against the schema's root is weak: the root's
``anyOf`` does not tie ``params`` to ``method`` (an ``agent_message_chunk``
without ``messageId`` passes as some other method's params). ``Validator``
instead picks the ``$defs`` entry by method and sender, the way the schema's
own envelopes group them (``ClientRequest``, ``AgentNotification``,
``AgentResponse`` ..., each entry annotated with ``x-method``/``x-side``):

* a request or notification: ``params`` against the definition of its method
  for the side that sends it;
* a response: ``result`` against the response definition of the request's
  method (the caller says which request it answers), ``error`` against
  ``Error``;
* a method the schema does not list is a problem unless it starts with ``_``
  (an extension method, which the schema's ``Ext*`` definitions accept).

Then the checks the schema cannot express:

* an open enum (a tagged union or string enum with an ``other`` branch:
  ``stopReason``, ``sessionUpdate``, ``state``, tool call ``status`` ...)
  takes a value it does not list only if the value starts with ``_``
  (enum-variant-extension RFD: "Extensions MUST NOT define custom
  non-underscore values");
* ``error`` on a ``state_update`` only beside ``state: "idle"`` and
  ``stopReason: "error"`` (RFD: "Beside any other stop reason it is an unknown
  field"); there the schema checks it is a JSON-RPC error object.

Speed: a compiled validator (jsonschema-rs, ``sims.wire.schema_compiled``)
first says whether there is anything to report about a message; only when there
is does the code below run to say what, so the words are the same with it or
without it (``compiled=False``, or jsonschema-rs not installed). Below, the
validators are ``Draft202012Validator`` subclasses compiled once per
``$defs`` name over a ``referencing`` registry. Tagged unions are dispatched on
their tag (``x-acp-tagged``, the one keyword added) instead of trying every
branch of the ``anyOf``: the same verdict, with the error of the branch the
tag names. Results are memoised by message, since a model exploration renders
the same few dozen messages tens of thousands of times.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .schema_shapes import open_enum, tagged_union
from .schema_source import (
    PULL_HINT,
    PACKAGE,
    PACKAGE_INTEGRITY,
    SCHEMA_INTEGRITY,
    SCHEMA_V1_INTEGRITY,
    VERSION,
    VERSIONS,
    SchemaError,
    cache_problem,  # noqa: F401 - re-exported (tests/conftest.py)
    cache_path,
    locate,
    pull,
    sri,
)

__all__ = [
    "PACKAGE",
    "VERSION",
    "VERSIONS",
    "PACKAGE_INTEGRITY",
    "SCHEMA_INTEGRITY",
    "SCHEMA_V1_INTEGRITY",
    "ModelValidation",
    "SchemaError",
    "Validator",
    "cache_path",
    "locate",
    "measure",
    "pull",
    "sri",
    "step_problems",
    "validate_model",
]


_URI = "urn:acp-lifecycle:acp-v2-schema"

# ---------------------------------------------------------------------------
# Preparing the schema: absolute $refs, tagged unions dispatched on their tag


def _prepare(node):
    """A copy of the schema with absolute ``$ref``s, ``x-acp-tagged`` in place of
    tagged ``anyOf``s and ``x-acp-open-enum`` beside open string enums."""
    if isinstance(node, list):
        return [_prepare(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k == "$ref" and isinstance(v, str) and v.startswith("#"):
            out[k] = _URI + v
        elif k != "description":
            out[k] = _prepare(v)
    branches = node.get("anyOf")
    if isinstance(branches, list):
        table = tagged_union(branches)
        if table is not None:
            prepared = out.pop("anyOf")
            if table["other"] is not None:
                prepared[table["other"]].pop("not", None)
            table["branches"] = prepared
            table["listed"] = tuple(table["cases"])
            out["x-acp-tagged"] = table
        else:
            values = open_enum(branches)
            if values is not None:
                out["x-acp-open-enum"] = values
    return out


def _tagged_keyword(validator, table, instance, schema):
    """``x-acp-tagged``: validate the branch the tag names (the ``anyOf`` it replaces
    is valid exactly when that branch is)."""
    tag = table["tag"]
    if not validator.is_type(instance, "object"):
        yield ValidationError(f"{instance!r} is not of type 'object'")
        return
    value = instance.get(tag)
    if isinstance(value, str):
        i = table["cases"].get(value, table["other"])
        if i is None:
            yield ValidationError(f"{value!r} is not one of {list(table['listed'])!r}", path=[tag])
            return
    elif value is None:
        i = table["none"]
        if i is None:
            if tag in instance:
                yield ValidationError(f"None is not one of {list(table['listed'])!r}", path=[tag])
            else:
                yield ValidationError(f"{tag!r} is a required property")
            return
    else:
        yield ValidationError(f"{value!r} is not of type 'string'", path=[tag])
        return
    yield from validator.descend(instance, table["branches"][i], schema_path=i)


_FastValidator = validators.extend(Draft202012Validator, {"x-acp-tagged": _tagged_keyword})


# ---------------------------------------------------------------------------
# The validator

#: The envelope definitions the schema groups methods in: (definition, who sends, kind).
_ENVELOPES = (
    ("ClientRequest", "client", "request"),
    ("ClientNotification", "client", "notification"),
    ("ClientResponse", "client", "response"),
    ("AgentRequest", "agent", "request"),
    ("AgentNotification", "agent", "notification"),
    ("AgentResponse", "agent", "response"),
)
_SIDES = ("client", "agent")
_INT64 = (-(2**63), 2**63 - 1)


def _refs(node) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield ref[len("#/$defs/") :]
        for v in node.values():
            yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def _where(base: str, path: Iterable) -> str:
    out = base
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "message"


def _is_request_id(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return _INT64[0] <= value <= _INT64[1]
    return isinstance(value, str)



def _proposal_check(proposals: tuple, sender: str, instance, where: str, out: list[str], **which) -> bool:
    """Validate a message of a method one of ``proposals`` adds (``model/proposals``: ``Message.schema``) into
    ``out``; False when none has it. ``which``: ``method=`` (a call's params) or ``answers=`` (a result)."""
    from acp_lifecycle.model.proposals import get_proposal

    method, answers = which.get("method"), which.get("answers")
    found = [m for name in proposals for m in get_proposal(name).messages
             if m.sender == sender and not m.error and (m.method, m.answers) == (method, answers)]
    if not found:
        return False
    m = found[0]
    if m.schema is not None:
        validator = _PROPOSAL_VALIDATORS.get(m.kind)
        if validator is None:
            validator = _PROPOSAL_VALIDATORS[m.kind] = Draft202012Validator(m.schema)
        for e in sorted(validator.iter_errors(instance), key=lambda e: list(e.path)):
            path = ".".join(str(p) for p in e.path)
            out.append(f"{where}{'.' + path if path else ''}: {e.message} (the {m.kind} schema of its proposal)")
    return True


_PROPOSAL_VALIDATORS: dict = {}

class Validator:
    """Checks JSON-RPC messages against the v2 schema at ``schema_path``
    (loaded once; one compiled validator per ``$defs`` name, on first use)."""

    def __init__(self, schema_path: str | os.PathLike, cache_size: int = 4096, compiled: bool = True):
        self.path = Path(schema_path)
        try:
            raw = self.path.read_bytes()
            doc = json.loads(raw)
        except OSError as e:
            raise SchemaError(f"schema {self.path}: cannot be read ({e.strerror or e})") from None
        except (ValueError, RecursionError) as e:
            raise SchemaError(f"schema {self.path}: not JSON ({e})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("$defs"), dict):
            raise SchemaError(f"schema {self.path}: not an ACP JSON schema (no $defs); {PULL_HINT} or pass the v2 schema.json")
        #: True when this is byte for byte the pinned 2.4.0 file (v2 or v1).
        self.pinned = sri(raw) in (SCHEMA_INTEGRITY, SCHEMA_V1_INTEGRITY)
        #: "v1" for the v1 schema (it has session/load and no state_update), else "v2".
        self.version = "v1" if "LoadSessionRequest" in doc["$defs"] and "StateUpdate" not in doc["$defs"] else "v2"
        self.doc = doc
        self.defs: dict = doc["$defs"]
        self._compiled: dict[str, object] = {}
        self._sub: dict[int, object] = {}
        self._memo: dict = {}
        self._cache_size = cache_size
        #: the compiled fast path (``sims.wire.schema_compiled``), built on first use; False: not built yet
        self._fast = False if compiled else None
        #: Set by a caller that knows the message it is about to check holds only plain JSON values
        #: (no ``RawFloat``: ``sims.wire.transcript.Reader.plain``); the compiled path then need not look.
        self.plain_values = False
        #: the proposals (``model/proposals``) whose methods are valid here, each checked with its own schema:
        #: those the rules of a ``trace --variant`` compose; with none, a method of the schema's or an error
        self.proposals: tuple = ()
        try:
            self._prepared = _prepare(doc)
            self._registry = Registry().with_resource(_URI, Resource.from_contents(self._prepared, default_specification=DRAFT202012))
            self._methods = self._method_tables()
        except (KeyError, TypeError, IndexError, AttributeError, ValueError) as e:  # JSON, but not shaped as the v2 schema
            raise SchemaError(f"schema {self.path}: not an ACP v2 schema ({type(e).__name__}: {e}); "
                              f"{PULL_HINT} or pass the v2 schema.json") from None

    # -- method tables ------------------------------------------------------

    def _method_tables(self) -> dict:
        """{(sender, kind): {method: definition name}} from the schema's envelopes."""
        tables: dict = {(side, kind): {} for side in _SIDES for kind in ("request", "notification", "response")}
        ext: dict = {}
        for name, side, kind in _ENVELOPES:
            env = self.defs.get(name)
            if env is None:
                raise SchemaError(f"schema {self.path}: no $defs/{name}; not an ACP schema ({PULL_HINT} or pass the v2 schema.json)")
            holder = env["properties"]["params"] if kind != "response" else env["anyOf"][0]["properties"]["result"]
            for ref in _refs(holder):
                method = self.defs.get(ref, {}).get("x-method")
                if method is None:
                    ext[(side, kind)] = ref  # ExtRequest / ExtNotification / ExtResponse
                else:
                    tables[(side, kind)][method] = ref
        for entry in self.doc.get("anyOf", ()):
            if isinstance(entry, dict) and entry.get("title") == "ProtocolLevel":
                for ref in _refs(entry.get("properties", {}).get("params", {})):
                    method = self.defs.get(ref, {}).get("x-method")
                    if method:
                        for side in _SIDES:
                            tables[(side, "notification")][method] = ref
        if not tables[("client", "request")] or not tables[("agent", "response")]:
            raise SchemaError(f"schema {self.path}: lists no methods; not an ACP schema")
        self._ext = ext
        return tables

    @property
    def backend(self) -> str:
        """What answers first: "jsonschema-rs" (compiled; jsonschema only explains problems) or "jsonschema"."""
        return "jsonschema-rs" if self._fast_path() is not None else "jsonschema"

    def _fast_path(self):
        if self._fast is False:
            from .schema_compiled import compiled

            self._fast = compiled(self.doc)
        return self._fast

    def methods(self, sender: str, kind: str) -> dict[str, str]:
        """``{method: $defs name}`` of what ``sender`` sends as ``kind``
        (``request`` / ``notification`` / ``response``)."""
        return dict(self._methods[(sender, kind)])

    # -- compiled validators --------------------------------------------------

    def _validator(self, name: str):
        v = self._compiled.get(name)
        if v is None:
            v = self._compiled[name] = _FastValidator({"$ref": f"{_URI}#/$defs/{name}"}, registry=self._registry)
        return v

    def _sub_validator(self, schema: dict):
        v = self._sub.get(id(schema))
        if v is None:
            v = self._sub[id(schema)] = (_FastValidator(schema, registry=self._registry), schema)
        return v[0]

    def _resolve(self, ref: str) -> tuple[str, dict]:
        pointer = ref[len(_URI) :] if ref.startswith(_URI) else ref
        node = self._prepared
        for part in pointer.lstrip("#").strip("/").split("/"):
            if part:
                part = part.replace("~1", "/").replace("~0", "~")
                node = node[int(part)] if isinstance(node, list) else node[part]
        return pointer, node

    # -- checking -------------------------------------------------------------

    def check(self, msg: dict, sender: str, request_method: str | None = None) -> list[str]:
        """Every problem of ``msg`` sent by ``sender`` (``"client"`` / ``"agent"``);
        empty when it is valid. For a response, ``request_method`` is the method of
        the request it answers (without it only the envelope and ``error`` are checked)."""
        if sender not in _SIDES:
            raise ValueError(f"sender must be 'client' or 'agent', not {sender!r}")
        if self._cache_size:
            try:
                key = (sender, request_method, json.dumps(msg, sort_keys=True, separators=(",", ":")))
            except (TypeError, ValueError):
                key = None
            if key is not None:
                hit = self._memo.get(key)
                if hit is None:
                    if len(self._memo) >= self._cache_size:
                        self._memo.clear()
                    hit = self._memo[key] = tuple(self._check(msg, sender, request_method))
                return list(hit)
        return self._check(msg, sender, request_method)

    def _check(self, msg, sender: str, request_method: str | None) -> list[str]:
        if not isinstance(msg, dict):
            return [f"message: {type(msg).__name__} is not a JSON-RPC message (a JSON object)"]
        out: list[str] = []
        if msg.get("jsonrpc") != "2.0":
            out.append(f"jsonrpc: must be \"2.0\", not {json.dumps(msg.get('jsonrpc'))}" if "jsonrpc" in msg else 'jsonrpc: missing (must be "2.0")')
        if "method" in msg:
            self._check_call(msg, sender, out)
        elif "id" in msg or "result" in msg or "error" in msg:
            self._check_response(msg, sender, request_method, out)
        else:
            out.append("message: neither a request, a notification nor a response (no method, id, result or error)")
        return out

    def _check_call(self, msg: dict, sender: str, out: list[str]) -> None:
        method = msg["method"]
        for k in ("result", "error"):
            if k in msg:
                out.append(f"{k}: a request or notification carries no {k}")
        if not isinstance(method, str):
            out.append(f"method: {json.dumps(method)} is not a string")
            return
        kind = "request" if "id" in msg else "notification"
        if kind == "request" and not _is_request_id(msg["id"]):
            out.append(f"id: {json.dumps(msg['id'])} is not a request id (an int64 or a string)")
        name = self._methods[(sender, kind)].get(method)
        if name is None:
            if method.startswith("_"):
                name = self._ext.get((sender, kind))
                if name is None:
                    return
            elif self.proposals and _proposal_check(self.proposals, sender, msg.get("params", {}), "params", out,
                                                    method=method):
                return  # a method a proposal adds (model/proposals): its own schema
            else:
                out.append(self._unknown_method(method, sender, kind))
                return
        if "params" in msg:
            params = msg["params"]
        else:
            if self._validator(name).is_valid({}):
                return
            out.append(f"params: missing ({method} takes {name}, which has required members)")
            return
        self._validate(name, params, "params", out)

    def _unknown_method(self, method: str, sender: str, kind: str) -> str:
        other_kind = "notification" if kind == "request" else "request"
        other_side = "agent" if sender == "client" else "client"
        if method in self._methods[(sender, other_kind)]:
            if kind == "request":
                return f"method: {method} is a notification: it takes no id"
            return f"id: missing; {method} is a request, which carries an id"
        if method in self._methods[(other_side, kind)] or method in self._methods[(other_side, other_kind)]:
            return f"method: {method} is sent by the {other_side}, not the {sender}"
        return f"method: {method!r} is not a method of the {self.version} schema (an extension method must start with '_')"

    def _check_response(self, msg: dict, sender: str, request_method: str | None, out: list[str]) -> None:
        has_result, has_error = "result" in msg, "error" in msg
        if "id" not in msg:
            out.append("id: missing (a response carries the id of its request)")
        elif msg["id"] is None:
            if not has_error:
                out.append("id: null only in an error response to a request whose id could not be read")
        elif not _is_request_id(msg["id"]):
            out.append(f"id: {json.dumps(msg['id'])} is not a request id (an int64 or a string)")
        if has_result and has_error:
            out.append("message: a response carries result or error, not both")
        elif not has_result and not has_error:
            out.append("message: a response carries result or error")
        if has_error:
            self._validate("Error", msg["error"], "error", out)
        if not has_result or request_method is None:
            return
        name = self._methods[(sender, "response")].get(request_method)
        if name is None and self.proposals and _proposal_check(self.proposals, sender, msg["result"], "result", out,
                                                               answers=request_method):
            return  # the result of a method a proposal adds
        if name is None:
            if request_method.startswith("_"):
                name = self._ext.get((sender, "response"))
                if name is None:
                    return
            else:
                other = "agent" if sender == "client" else "client"
                if request_method in self._methods[(other, "response")]:
                    out.append(f"result: {request_method} is answered by the {other}, not the {sender}")
                else:
                    out.append(f"result: answers {request_method!r}, which is not a request the {sender} answers in the {self.version} schema")
                return
        self._validate(name, msg["result"], "result", out)

    def _validate(self, name: str, instance, where: str, out: list[str]) -> None:
        fast = self._fast
        if fast is False:
            fast = self._fast_path()
        if fast is not None and fast.passes(name, instance, self.plain_values):
            return  # nothing to say (schema_compiled: the same verdict as the lines below)
        v = self._validator(name)
        if not v.is_valid(instance):
            for err in v.iter_errors(instance):
                for leaf in self._explain(err):
                    out.append(self._describe(leaf, name, where))
            return
        self._conventions(self._resolve(f"#/$defs/{name}")[1], instance, where, out, 0)

    # -- explaining schema errors -------------------------------------------

    def _explain(self, err: ValidationError) -> list[ValidationError]:
        """The errors that say what is wrong: inside an untagged ``anyOf``, the
        branches whose type fits the instance."""
        if err.validator not in ("anyOf", "oneOf") or not err.context:
            return [err]
        groups: dict = {}
        for e in err.context:
            groups.setdefault(e.relative_schema_path[0], []).append(e)
        fitting = [g for g in groups.values() if not any(e.validator == "type" and not e.relative_path for e in g)]
        if len(fitting) == 1:
            return [leaf for e in fitting[0] for leaf in self._explain(e)]
        return [err]

    def _describe(self, err: ValidationError, name: str, where: str) -> str:
        message = err.message
        if err.validator in ("anyOf", "oneOf"):
            types = sorted({e.validator_value for e in err.context if e.validator == "type" and not e.relative_path and isinstance(e.validator_value, str)})
            text = json.dumps(err.instance)
            text = text if len(text) <= 80 else text[:77] + "..."
            if types and all(e.validator in ("type", "const") and not e.relative_path for e in err.context):
                message = f"{text} is not of type {' or '.join(repr(t) for t in types)}"
            else:
                message = f"{text} is not valid under any of the given schemas"
        return f"{_where(where, err.absolute_path)}: {message} (schema {self._pointer(name, err.absolute_schema_path)})"

    def _pointer(self, name: str, schema_path) -> str:
        """The error's location in the original schema, as a JSON pointer from
        the innermost ``$defs`` entry (jsonschema paths omit the ``$ref`` hops)."""
        node, pointer = self.defs[name], f"#/$defs/{name}"
        for token in schema_path:
            token = "anyOf" if token == "x-acp-tagged" else token
            for _ in range(32):
                has = (isinstance(node, dict) and token in node) or (isinstance(node, list) and isinstance(token, int) and token < len(node))
                if has or not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
                    break
                pointer = node["$ref"]
                node = self.defs[pointer.rsplit("/", 1)[1]]
            try:
                node = node[token]
            except (KeyError, IndexError, TypeError):
                return f"{pointer}/{token}"
            pointer += f"/{token}"
        return pointer

    # -- what the schema cannot express -------------------------------------

    def _conventions(self, schema, inst, where: str, out: list[str], depth: int) -> None:
        """Walk a valid instance along its schema: open enums take unlisted values
        only with a '_' prefix; a state_update's ``error`` only on an idle error."""
        if depth > 64 or not isinstance(schema, dict):
            return
        ref = schema.get("$ref")
        if isinstance(ref, str):
            pointer, target = self._resolve(ref)
            if pointer == "#/$defs/StateUpdate":
                self._state_error_rule(inst, where, out)
            self._conventions(target, inst, where, out, depth + 1)
        for sub in schema.get("allOf", ()):
            self._conventions(sub, inst, where, out, depth + 1)
        table = schema.get("x-acp-tagged")
        if table is not None and isinstance(inst, dict):
            tag = table["tag"]
            value = inst.get(tag)
            if isinstance(value, str) and value not in table["cases"]:
                if not value.startswith("_"):
                    out.append(self._unlisted(_where(where, [tag]), value, table["listed"]))
            else:
                i = table["cases"].get(value) if isinstance(value, str) else table["none"]
                if i is not None:
                    self._conventions(table["branches"][i], inst, where, out, depth + 1)
        listed = schema.get("x-acp-open-enum")
        if listed is not None:
            if isinstance(inst, str) and inst not in listed and not inst.startswith("_"):
                out.append(self._unlisted(where, inst, listed))
        elif isinstance(schema.get("anyOf"), list):
            for sub in schema["anyOf"]:
                if self._sub_validator(sub).is_valid(inst):
                    self._conventions(sub, inst, where, out, depth + 1)
        if isinstance(inst, dict):
            props = schema.get("properties") or {}
            for k, sub in props.items():
                if k in inst:
                    self._conventions(sub, inst[k], _where(where, [k]), out, depth + 1)
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                for k, v in inst.items():
                    if k not in props:
                        self._conventions(extra, v, _where(where, [k]), out, depth + 1)
        elif isinstance(inst, list) and isinstance(schema.get("items"), dict):
            for i, v in enumerate(inst):
                self._conventions(schema["items"], v, _where(where, [i]), out, depth + 1)

    @staticmethod
    def _unlisted(where: str, value: str, listed: tuple) -> str:
        return (
            f"{where}: {json.dumps(value)} is not a value the schema lists ({', '.join(listed)}); "
            "a custom value must start with '_' (enum-variant-extension: "
            "\"Implementations MUST NOT treat an unknown non-underscore value as a custom extension\")"
        )

    @staticmethod
    def _state_error_rule(update, where: str, out: list[str]) -> None:
        if not isinstance(update, dict) or "error" not in update:
            return
        state, stop = update.get("state"), update.get("stopReason")
        if state == "idle" and stop == "error":
            return  # the schema checked the error object there (ErrorStopReason)
        out.append(
            f"{_where(where, ['error'])}: allowed only beside stopReason \"error\" on an idle state_update, "
            f"not with state {json.dumps(state)} and stopReason {json.dumps(stop)} "
            "(RFD: \"error exists only on the error stop reason … Beside any other stop reason it is an unknown field\")"
        )


# ---------------------------------------------------------------------------
# The model's messages


def _request_method(pre, step, client: int, msg: dict) -> str | None:
    """The method of the request a model-rendered response answers.

    ``perm_N`` ids are ``session/request_permission``; int ids are the client's
    ``session/prompt`` or ``session/resume`` (one counter per client), told apart
    by the agent's received prompts and the client's submissions and pending resume.
    """
    rid = msg.get("id")
    if isinstance(rid, str) and rid.startswith("perm_"):
        return "session/request_permission"
    if not isinstance(rid, int):
        return None
    for s in (pre, step.state):
        if any(r.cid == client and r.rid == rid for r in s.agent.reqs):
            return "session/prompt"
        if any(sub.rid == rid for sub in s.clients[client].subs):
            return "session/prompt"
    if pre.clients[client].resuming or step.state.clients[client].resuming:
        return "session/resume"
    return None


def step_problems(validator: Validator, pre, step) -> list[tuple[str, int, dict, str]]:
    """Schema problems of the messages one model step renders:
    ``[(direction, client, message, problem), ...]``."""
    from acp_lifecycle.model.wire import step_messages

    out = []
    for direction, client, msg in step_messages(pre, step):
        sender = "client" if direction.endswith("->agent") else "agent"
        method = None
        if "method" not in msg:
            method = _request_method(pre, step, client, msg)
            if method is None:
                out.append((direction, client, msg, "cannot tell which request this response answers"))
                continue
        for problem in validator.check(msg, sender, method):
            out.append((direction, client, msg, problem))
    return out


@dataclass
class ModelValidation:
    """Every message of every step of every reachable state, validated."""

    member: str
    states: int = 0
    steps: int = 0
    messages: int = 0
    seconds: float = 0.0
    #: problem -> (action, direction, client, message) of its first occurrence
    problems: dict = field(default_factory=dict)


def validate_model(validator: Validator, cfg, rules=None, max_states: int = 1_000_000) -> ModelValidation:
    """BFS over ``model.system.successors``; validate what each step renders."""
    from acp_lifecycle.model.config import RFD_RULES
    from acp_lifecycle.model.system import initial_state, successors
    from acp_lifecycle.model.wire import step_messages

    rules = RFD_RULES if rules is None else rules
    result = ModelValidation(cfg.name)
    t0 = time.perf_counter()
    s0 = initial_state(cfg, rules)
    seen = {s0}
    queue = deque([s0])
    while queue:
        pre = queue.popleft()
        for step in successors(pre, cfg, rules):
            result.steps += 1
            result.messages += len(step_messages(pre, step))
            for direction, client, msg, problem in step_problems(validator, pre, step):
                result.problems.setdefault(problem, (step.action, direction, client, msg))
            if step.state not in seen:
                if len(seen) >= max_states:
                    raise RuntimeError(f"{cfg.name}: more than {max_states:,} states")
                seen.add(step.state)
                queue.append(step.state)
    result.states = len(seen)
    result.seconds = time.perf_counter() - t0
    return result


def measure(validator: Validator, samples: list[tuple[dict, str, str | None]], seconds: float = 1.0, cached: bool = False) -> float:
    """Messages validated per second over ``samples`` ``(msg, sender, request_method)``,
    cycling through them for about ``seconds``. ``cached=False`` measures the
    validation itself (no memo); ``cached=True`` what a model exploration sees."""
    check = validator.check if cached else validator._check
    n, t0 = 0, time.perf_counter()
    deadline = t0 + seconds
    while True:
        for msg, sender, method in samples:
            check(msg, sender, method)
        n += len(samples)
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - t0)
