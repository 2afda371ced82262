"""The two shapes of ``anyOf`` in the ACP schema that validation rewrites for speed.

A *tagged union* (an ``anyOf`` whose branches each fix one string tag such as
``"sessionUpdate": "agent_message_chunk"``, plus at most an ``other`` catch-all and a
``none`` branch) is dispatched on its tag instead of trying every branch; an *open
enum* (listed string constants plus an ``other`` string) checks membership. Both
``schema.py`` (the jsonschema path) and ``schema_compiled.py`` (the jsonschema-rs
path) read the schema with these, so they live below both.

>>> def case(tag):
...     return {"type": "object", "properties": {"type": {"type": "string", "const": tag}}, "required": ["type"]}
>>> tagged_union([case("text"), case("image")])["cases"]
{'text': 0, 'image': 1}
>>> open_enum([{"type": "string", "const": "end_turn"}, {"type": "string", "title": "other"}])
('end_turn',)
"""

from __future__ import annotations

__all__ = ["tagged_union", "open_enum"]


def _branch_tag(branch) -> tuple[str, str, object] | None:
    """("const", tag, value) / ("other", tag, None) / ("none", tag, None) for a
    branch of a tagged union as the schema generator writes them, else None."""
    if not isinstance(branch, dict) or branch.get("type") != "object":
        return None
    props = branch.get("properties")
    if not isinstance(props, dict) or len(props) != 1:
        return None
    (tag, spec), = props.items()
    if not isinstance(spec, dict):
        return None
    spec = {k: v for k, v in spec.items() if k != "description"}
    required = branch.get("required")
    if "const" in spec and spec.get("type") == "string" and required == [tag]:
        return ("const", tag, spec["const"])
    if branch.get("title") == "other" and spec == {"type": "string"} and required == [tag]:
        return ("other", tag, None)
    if branch.get("title") == "none" and spec == {"type": "null"} and not required:
        return ("none", tag, None)
    return None


def tagged_union(branches: list) -> dict | None:
    """The dispatch table of a tagged ``anyOf`` (None if it is not one)."""
    kinds = [_branch_tag(b) for b in branches]
    if not kinds or any(k is None for k in kinds):
        return None
    tags = {k[1] for k in kinds}
    consts = [k[2] for k in kinds if k[0] == "const"]
    if len(tags) != 1 or not consts or len(set(consts)) != len(consts):
        return None
    tag = tags.pop()
    table: dict = {"tag": tag, "cases": {}, "other": None, "none": None}
    for i, k in enumerate(kinds):
        if k[0] == "const":
            table["cases"][k[2]] = i
        elif table[k[0]] is not None:
            return None
        else:
            table[k[0]] = i
    other = table["other"]
    if other is not None:
        # "other" is the catch-all: valid iff the tag is a string none of the
        # cases names. Dispatch already established that; the rest must be
        # exactly what the generator writes, or the rewrite would not be exact.
        rest = {k: v for k, v in branches[other].items() if k not in ("title", "type", "properties", "required", "not", "description")}
        if rest not in ({}, {"additionalProperties": True}):
            return None
        excluded = branches[other].get("not", {}).get("anyOf")
        if not isinstance(excluded, list) or {k[2] for k in map(_branch_tag, excluded) if k and k[0] == "const"} != set(consts):
            return None
    return table


def open_enum(branches: list) -> tuple[str, ...] | None:
    """The listed values of a string enum with an ``other`` branch, else None."""
    values, other = [], False
    for b in branches:
        if not isinstance(b, dict) or b.get("type") != "string":
            return None
        if "const" in b:
            values.append(b["const"])
        elif b.get("title") == "other" and set(b) - {"description"} == {"title", "type"}:
            other = True
        else:
            return None
    return tuple(values) if other and values else None
