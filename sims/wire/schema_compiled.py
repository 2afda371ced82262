"""The compiled fast path of ``sims.wire.schema.Validator``: one yes/no per message.

``Validator`` explains what is wrong with a message in Python (jsonschema,
then a walk for the rules the schema cannot express); that costs a few hundred
microseconds a message, most of a long transcript's checking time. Nearly every
message is fine, so a compiled validator (jsonschema-rs, Rust) answers first
"is there anything to say at all?" and only a message with something to say
goes the slow way, which then says it in the same words as before.

The compiled validator checks a *strict* copy of the schema: every ``$defs``
entry ``X`` gains ``__strict__X``, the same constraints plus the conventions of
``Validator._conventions``, written in JSON Schema along the very paths that
walk takes:

* an open string enum (listed values plus an ``other`` branch): its ``other``
  branch takes only strings that start with ``_``;
* a tagged union (the ``anyOf`` of ``Validator``'s ``x-acp-tagged``): the
  branch the tag names is the only one a value can be valid under, so the
  strict form is the ``anyOf`` of the strict branches, the ``other`` branch's
  tag starting with ``_``;
* an untagged ``anyOf``: for every branch, ``if`` the instance is valid under
  it ``then`` also under its strict form (the walk visits every valid branch);
* ``allOf``, ``properties``, ``additionalProperties``, ``items``, ``$ref``:
  their strict forms; ``StateUpdate``: ``error`` only beside ``state: "idle"``
  and ``stopReason: "error"``. Nothing else is made strict (``oneOf``,
  ``not`` and ``if`` stay as the schema wrote them: the walk does not enter them).

So the strict copy accepts a value exactly when the schema does and the walk
finds nothing: the compiled yes is the Python path's empty list.
tests/test_schema_compiled.py compares both, message by message, on the
corpus, the test vectors and mutations of them.

jsonschema-rs reads only the JSON types; a number kept with its literal
(``RawFloat``, a ``float`` subclass) is not one of them, so a message holding
one always takes the slow path. Where jsonschema-rs cannot be imported,
``compiled()`` returns None and every message takes the slow path (the same
findings, slower).
"""

from __future__ import annotations

from .schema_shapes import open_enum, tagged_union

try:  # a compiled wheel: absent on a platform without one, the slow path does the work
    import jsonschema_rs
except ImportError:  # pragma: no cover - depends on the platform
    jsonschema_rs = None

__all__ = ["BACKEND", "Compiled", "compiled", "reaching", "strict_schema"]

#: The library that answers first: "jsonschema-rs", or "jsonschema" where it cannot be imported.
BACKEND = "jsonschema-rs" if jsonschema_rs is not None else "jsonschema"

_STRICT = "__strict__"
_DEFS = "#/$defs/"

#: ``StateUpdate``: "error exists only on the error stop reason" (``Validator._state_error_rule``).
_STATE_ERROR_RULE = {
    "if": {"type": "object", "required": ["error"]},
    "then": {"required": ["state", "stopReason"],
             "properties": {"state": {"const": "idle"}, "stopReason": {"const": "error"}}},
}


def _underscored(branch: dict, tag: str | None = None) -> dict:
    """The ``other`` branch of an open enum (``tag`` None) or of a tagged union: its
    unlisted string starts with ``_`` ("Extensions MUST NOT define custom non-underscore values")."""
    out = _strict(branch)
    if tag is None:
        return {**out, "pattern": "^_"}
    return {**out, "allOf": [*out.get("allOf", ()), {"properties": {tag: {"pattern": "^_"}}}]}


def _strict(node):
    """The strict form of one schema node (see the module docstring)."""
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k != "description"}
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS):
        out["$ref"] = _DEFS + _STRICT + ref[len(_DEFS):]
    extra = []
    branches = node.get("anyOf")
    if isinstance(branches, list):
        table = tagged_union(branches)
        values = None if table is not None else open_enum(branches)
        if table is not None:
            # the branch the tag names is the one valid branch: strict branches, the same anyOf
            other = table["other"]
            out["anyOf"] = [_underscored(b, table["tag"]) if i == other else _strict(b) for i, b in enumerate(branches)]
        elif values is not None:
            out["anyOf"] = [_underscored(b) if b.get("title") == "other" else b for b in branches]
        else:  # the walk visits every branch the value is valid under
            extra = [{"if": b, "then": _strict(b)} for b in branches]
    if "allOf" in node or extra:
        out["allOf"] = [_strict(s) for s in node.get("allOf", ())] + extra
    if isinstance(node.get("properties"), dict):
        out["properties"] = {k: _strict(v) for k, v in node["properties"].items()}
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _strict(node["additionalProperties"])
    if isinstance(node.get("items"), dict):
        out["items"] = _strict(node["items"])
    return out


def strict_schema(doc: dict) -> dict:
    """The schema with a strict twin ``__strict__X`` beside every ``$defs`` entry ``X``."""
    defs = dict(doc["$defs"])
    for name, node in doc["$defs"].items():
        defs[_STRICT + name] = _strict(node)
    if "StateUpdate" in doc["$defs"]:
        defs[_STRICT + "StateUpdate"] = {"allOf": [defs[_STRICT + "StateUpdate"], _STATE_ERROR_RULE]}
    out = {"$defs": defs}
    if "$schema" in doc:
        out["$schema"] = doc["$schema"]
    return out


def _local_refs(node):
    """The ``$defs`` names ``node`` refers to (``#/$defs/NAME`` or a pointer below one), and
    whether every ``$ref`` in it is of that form."""
    names, only_defs, todo = set(), True, [node]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            ref = x.get("$ref")
            if isinstance(ref, str):
                if ref.startswith(_DEFS):
                    names.add(ref[len(_DEFS):].split("/", 1)[0].replace("~1", "/").replace("~0", "~"))
                else:
                    only_defs = False
            todo.extend(x.values())
        elif isinstance(x, list):
            todo.extend(x)
    return names, only_defs


def reaching(doc: dict, name: str) -> dict:
    """``doc``'s ``$defs/name``, with only the definitions that one reaches (and the dialect): the same
    verdicts, and compiled several times faster than with all of them (both sets of a strict schema
    are 400 definitions; a message's reaches a few dozen). Every definition if a ``$ref`` points
    elsewhere than into ``$defs``."""
    defs = doc["$defs"]
    keep: dict = {}
    todo = [name]
    while todo:
        d = todo.pop()
        if d in keep or d not in defs:
            continue  # a missing one: the compile fails as it would with every definition there
        keep[d] = defs[d]
        names, only_defs = _local_refs(defs[d])
        if not only_defs:
            keep = defs
            break
        todo.extend(names)
    out = {"$defs": keep, "$ref": _DEFS + name}
    if "$schema" in doc:
        out["$schema"] = doc["$schema"]
    return out


def _has_raw_number(x) -> bool:
    """Whether ``x`` holds a value of a type that is not a plain JSON type (a ``RawFloat``)."""
    t = type(x)
    if t is dict:
        return any(_has_raw_number(v) for v in x.values())
    if t is list:
        return any(_has_raw_number(v) for v in x)
    return t not in (str, int, bool, float, type(None))


class Compiled:
    """``passes(name, instance)``: True when ``instance`` is valid under ``$defs/name``
    and the conventions hold (nothing to report); False when there may be something to say."""

    def __init__(self, doc: dict):
        self._doc = strict_schema(doc)
        self._validators: dict = {}

    def _validator(self, name: str):
        """The compiled strict ``$defs/name`` (on first use: a ms or less each), or None if it does not compile."""
        if name not in self._validators:
            try:
                self._validators[name] = jsonschema_rs.validator_for(reaching(self._doc, _STRICT + name))
            except Exception:  # noqa: BLE001 - whatever it rejects, the slow path still answers
                self._validators[name] = None
        return self._validators[name]

    def passes(self, name: str, instance, plain: bool = False) -> bool:
        """``plain``: the caller knows ``instance`` holds only plain JSON values (no ``RawFloat``)."""
        v = self._validators.get(name, False)
        if v is False:
            v = self._validator(name)
        if v is None:
            return False
        try:
            ok = v.is_valid(instance)
        except (ValueError, TypeError, OverflowError):  # a value jsonschema-rs does not read: ask the slow path
            return False
        return ok and (plain or not _has_raw_number(instance))


def compiled(doc: dict) -> Compiled | None:
    """The compiled fast path for the schema ``doc``, or None without jsonschema-rs
    (or if it rejects the schema: the slow path still answers)."""
    if jsonschema_rs is None:
        return None
    try:
        return Compiled(doc)
    except (KeyError, TypeError, AttributeError):  # no $defs to twin: the slow path says what is wrong
        return None
