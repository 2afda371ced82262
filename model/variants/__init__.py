"""Spec variants: the RFD as written, its refinements, the alternatives its FAQ rejects, and changes
proposed to it. A variant is one TOML file in this folder, read with the standard library's ``tomllib``.

A variant is a small, named change to the ``Rules`` of a base rule set, never a fork of the
model. To add one, drop a file ``NAME.toml`` here::

    name = "inject-survives-cancel"     # the file's name without .toml
    base = "rfd+2.4.0"                  # the rule set it changes: rfd or rfd+2.4.0
    summary = "what it changes, in a sentence"
    source = "the text it stands for"
    order = 130                         # where it sorts in the matrix (default: after the others)
    worse_on = ["cancelled_prompt_never_inserted"]  # properties the base keeps and it breaks
    not_applicable = []                 # properties that cannot be stated for it

    [changes]                           # Rules fields (model/config.py) and their values
    cancel_rejects_held = "may"

    [expect]                            # a property's expectation where the variant changes it
    lost_response_recoverable = "must_hold"

A choice the model does not have yet is the one reason to touch the model: a new ``Rules``
field whose default is the old behaviour. The tests pick the file up (tests/test_variants.py
parametrizes over ``VARIANTS``); ``acp-lifecycle regress --accept --yes`` then writes its column
into the agreed matrix, docs/verdicts.json (generated, not edited). ``acp-lifecycle variants`` runs every variant and
prints the verdict matrix; ``acp-lifecycle regress`` compares it with docs/verdicts.json.

Reading the files here is the model's one read: package data, read once at import, never a
file the user names (``load_variants(folder)`` takes one for tests and tools).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path

from ..config import RULE_SETS, Rules
from ..properties import BY_ID
from ..properties._core import EXPECTATIONS

__all__ = ["Variant", "VariantError", "VARIANTS", "get_variant", "load_variant", "load_variants"]


class VariantError(ValueError):
    """A variant file is malformed; the message is one line and names the file."""


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    summary: str
    source: str
    changes: tuple[tuple[str, object], ...] = ()
    #: property id -> expectation under this variant, where it differs from the base's
    expect: tuple[tuple[str, str], ...] = ()
    #: properties that cannot be stated for this variant
    not_applicable: tuple[str, ...] = ()
    #: properties the base keeps and this variant is expected to break (the FAQ's argument)
    worse_on: tuple[str, ...] = ()
    #: the rule set the variant changes ("rfd" or "rfd+2.4.0")
    base: str = "rfd"
    order: int = 1000

    @property
    def rules(self) -> Rules:
        return RULE_SETS[self.base].with_(name=self.name, **dict(self.changes))

    def expectation(self, prop) -> str:
        """The property's expectation under this variant ("" when it is no rule of the variant's rule set)."""
        return dict(self.expect).get(prop.id, prop.expectation(self.rules))


#: Rules fields a variant may not set: its name is the file's, its text comes from ``base``,
#: and the model's functions are for mutants.
_FIXED = ("name", "spec", "parts")
_DEFAULTS = {f.name: f.default for f in fields(Rules) if f.name not in _FIXED}
_KEYS = {"name": str, "base": str, "summary": str, "source": str, "order": int, "worse_on": list,
         "not_applicable": list, "changes": dict, "expect": dict}


def _check(data: dict, where: str) -> None:
    for key, value in data.items():
        if key not in _KEYS:
            raise VariantError(f"{where}: unknown key {key!r}; keys: {', '.join(_KEYS)}")
        if type(value) is not _KEYS[key]:
            raise VariantError(f"{where}: {key} must be a {_KEYS[key].__name__}, not {type(value).__name__}")
    for key in ("name", "base", "summary", "source"):
        if not data.get(key):
            raise VariantError(f"{where}: {key} is missing")
    if data["base"] not in RULE_SETS:
        raise VariantError(f"{where}: base {data['base']!r} is no rule set; choose one of: {', '.join(RULE_SETS)}")
    for field, value in data.get("changes", {}).items():
        if field not in _DEFAULTS:
            raise VariantError(f"{where}: [changes] {field} is no Rules field a variant may change (model/config.py)")
        if type(value) is not type(_DEFAULTS[field]):
            raise VariantError(f"{where}: [changes] {field} = {value!r}: expected a "
                               f"{type(_DEFAULTS[field]).__name__} like its default {_DEFAULTS[field]!r}")
    for key in ("worse_on", "not_applicable"):
        for pid in data.get(key, ()):
            if pid not in BY_ID:
                raise VariantError(f"{where}: {key} names {pid!r}, which is no property")
    for pid, exp in data.get("expect", {}).items():
        if pid not in BY_ID or exp not in EXPECTATIONS:
            raise VariantError(f"{where}: [expect] {pid} = {exp!r}: a property and one of {', '.join(EXPECTATIONS)}")


def load_variant(text: str, where: str = "variant", stem: str | None = None) -> Variant:
    """The variant a TOML text defines; ``VariantError`` (one line, naming ``where``) when malformed."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise VariantError(f"{where}: not TOML: {e}") from None
    _check(data, where)
    if stem is not None and data["name"] != stem:
        raise VariantError(f"{where}: name {data['name']!r} differs from the file's name {stem!r}")
    return Variant(
        data["name"], data["summary"], data["source"],
        tuple(sorted(data.get("changes", {}).items())),
        tuple(sorted(data.get("expect", {}).items())),
        tuple(data.get("not_applicable", ())),
        tuple(data.get("worse_on", ())),
        data["base"],
        data.get("order", 1000),
    )


def load_variants(folder: str | Path | None = None) -> dict[str, Variant]:
    """Every ``*.toml`` variant in ``folder`` (this package by default), by ``order`` then name."""
    root = resources.files(__package__) if folder is None else Path(folder)
    found = []
    for entry in root.iterdir():
        if entry.name.endswith(".toml"):
            found.append(load_variant(entry.read_text(encoding="utf-8"), entry.name, entry.name[: -len(".toml")]))
    found.sort(key=lambda v: (v.order, v.name))
    return {v.name: v for v in found}


VARIANTS: dict[str, Variant] = load_variants()


def get_variant(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown variant {name!r}; `acp-lifecycle variants --list` shows them") from None
