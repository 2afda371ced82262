"""Spec variants: the RFD as written, its refinements, the alternatives its FAQ rejects, and changes
proposed to it. A variant is one TOML file in this folder, read with the standard library's ``tomllib``.

A variant is a small, named change to the ``Rules`` of its base, never a fork of the model. To
add one, drop a file ``NAME.toml`` here::

    name = "inject-survives-cancel"     # the file's name without .toml
    base = "rfd+2.4.0"                  # what it changes: a rule set (rfd, rfd+2.4.0) or another variant
    summary = "what it changes, in a sentence"
    source = "the text it stands for"
    order = 130                         # where it sorts in the matrix (default: after the others)
    worse_on = ["cancelled_prompt_never_inserted"]  # properties the base keeps and it breaks
    not_applicable = []                 # properties that cannot be stated for it
    proposals = []                      # proposals it enables (model/proposals), besides its base's

    [changes]                           # Rules fields (model/config.py) and its proposals' flags
    cancel_rejects_held = "may"

    [expect]                            # a property's expectation where the variant changes it
    lost_response_recoverable = "must_hold"

Every value is checked against its allowed set (``RULE_VALUES`` in model/config.py for a
``Rules`` field, ``Flag.values`` for a proposal's flag): a value outside it, an unknown key,
field, flag or proposal, an unknown base or a cycle of bases is a ``VariantError``, one line
naming the file, and every command refuses it with exit status 2. A variant inherits its base's
rules, proposals, flags, expectations and ``not_applicable``; ``worse_on`` is its own (what it
breaks that its base keeps). The FAQ's alternatives (``source`` starting ``FAQ:``) must name
what they break in ``worse_on``; a proposal may break nothing. A variant whose rules equal its
base's (``Variant.unchanged``) is said so at once by every command that takes it.

A choice the model does not have yet is the one reason to touch the model: a new ``Rules``
field whose default is the old behaviour (with its allowed values in ``RULE_VALUES``), or a
proposal (docs/proposals.md). The tests pick the file up (tests/test_variants.py parametrizes
over ``VARIANTS``). ``acp-lifecycle variants`` runs every variant and prints the verdict
matrix; ``acp-lifecycle regress`` compares it with the agreed matrix, docs/verdicts.json
(generated, not edited), and names a variant it has no column for; its column is pinned, and
nothing else written, by::

    acp-lifecycle regress --accept --yes --variant NAME

Reading the files here is the model's one read: package data, read on first use of ``VARIANTS``
(``variants()``), never a file the user names (``load_variants(folder)`` takes one for tests and
tools). The CLI reads them before any command runs, where a malformed file is a one-line error.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..config import RULE_SETS, RULE_VALUES, Rules, allowed_error, rule_value_error
from ..properties import property_by_id
from ..properties._core import EXPECTATIONS

__all__ = ["Variant", "VariantError", "VARIANTS", "get_variant", "lineage", "load_variant", "load_variants",
           "variants"]


class VariantError(ValueError):
    """A variant file is malformed; the message is one line and names the file."""


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    summary: str
    source: str
    #: the ``Rules`` fields it changes: ((field, value), ...) sorted
    changes: tuple[tuple[str, object], ...] = ()
    #: property id -> expectation under this variant, where it differs from the rule set's (its base's too)
    expect: tuple[tuple[str, str], ...] = ()
    #: properties that cannot be stated for this variant (its base's too)
    not_applicable: tuple[str, ...] = ()
    #: properties the base keeps and this variant is expected to break (the FAQ's argument)
    worse_on: tuple[str, ...] = ()
    #: what the variant changes: a rule set ("rfd", "rfd+2.4.0"; a rule set's own file names
    #: itself) or another variant
    base: str = "rfd"
    order: int = 1000
    #: the proposals its rules enable (its base's and its own), sorted
    proposals: tuple[str, ...] = ()
    #: the flag values its rules carry (its base's updated with its own, defaults dropped), sorted
    flags: tuple[tuple[str, object], ...] = ()
    #: the rules of its base; None: the rule set ``RULE_SETS[base]``
    base_rules: Rules | None = None

    @property
    def rules(self) -> Rules:
        return self._base().with_(name=self.name, proposals=self.proposals, flags=self.flags, **dict(self.changes))

    @property
    def unchanged(self) -> bool:
        """Its rules equal its base's, name aside: the file changes nothing (a rule set's own file,
        whose base is itself, is the reference, never unchanged)."""
        return self.base != self.name and self.rules == self._base().with_(name=self.name)

    def _base(self) -> Rules:
        return self.base_rules if self.base_rules is not None else RULE_SETS[self.base]

    def expectation(self, prop) -> str:
        """The property's expectation under this variant ("" when it is no rule of the variant's rule set)."""
        return dict(self.expect).get(prop.id, prop.expectation(self.rules))

    def unchanged_line(self) -> str:
        """What a command says, on one line, of a variant whose rules equal its base's."""
        return (f"variant {self.name}: its rules equal its base {self.base}'s: the file changes no rule, "
                f"so every verdict and run is {self.base}'s")


#: Rules fields a variant may not set: its name is the file's, its text comes from ``base``,
#: its proposals and flags from its ``proposals`` key, and the model's functions are for mutants.
_FIXED = ("name", "spec", "proposals", "flags", "parts")
_KEYS = {"name": str, "base": str, "summary": str, "source": str, "order": int, "worse_on": list,
         "not_applicable": list, "proposals": list, "changes": dict, "expect": dict}


def _is_property(pid: str) -> bool:
    """Whether ``pid`` is a property: the core's or a registered proposal's."""
    try:
        property_by_id(pid)
    except KeyError:
        return False
    return True


def _check(data: dict, where: str) -> None:
    """The checks one file allows without its base: keys, types, properties, expectations."""
    for key, value in data.items():
        if key not in _KEYS:
            raise VariantError(f"{where}: unknown key {key!r}; keys: {', '.join(_KEYS)}")
        if type(value) is not _KEYS[key]:
            raise VariantError(f"{where}: {key} must be a {_KEYS[key].__name__}, not {type(value).__name__}")
        if _KEYS[key] is list and any(type(x) is not str for x in value):
            raise VariantError(f"{where}: {key} must be a list of names (strings)")
    for key in ("name", "base", "summary", "source"):
        if not data.get(key):
            raise VariantError(f"{where}: {key} is missing")
    for key in ("worse_on", "not_applicable"):
        for pid in data.get(key, ()):
            if not _is_property(pid):
                raise VariantError(f"{where}: {key} names {pid!r}, which is no property")
    for pid, exp in data.get("expect", {}).items():
        if not _is_property(pid) or exp not in EXPECTATIONS:
            raise VariantError(f"{where}: [expect] {pid} = {exp!r}: a property and one of {', '.join(EXPECTATIONS)}")


def _parse(text: str, where: str, stem: str | None) -> dict:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise VariantError(f"{where}: not TOML: {e}") from None
    _check(data, where)
    if stem is not None and data["name"] != stem:
        raise VariantError(f"{where}: name {data['name']!r} differs from the file's name {stem!r}")
    return data


def _proposals():
    from .. import proposals  # on first need: most variants enable none

    return proposals


def _enable(names: list[str], where: str) -> None:
    """``VariantError`` unless every name is a proposal of the registry."""
    p = _proposals()
    for name in names:
        try:
            p.get_proposal(name)
        except p.ProposalError as e:
            raise VariantError(f"{where}: proposals: {e}") from None


def _flag(name: str, enabled: tuple[str, ...]):
    """The flag ``name`` of a proposal in ``enabled``, or None."""
    if not enabled:
        return None
    p = _proposals()
    for proposal in enabled:
        for f in p.get_proposal(proposal).flags:
            if f.name == name:
                return f
    return None


def _no_such(field: str, enabled: tuple[str, ...], where: str) -> VariantError:
    """The one line for a ``[changes]`` name that is neither a Rules field nor a flag it enables."""
    head = f"{where}: [changes] {field} is no Rules field a variant may change (model/config.py)"
    owners = [p.name for p in _proposals().PROPOSALS.values() if any(f.name == field for f in p.flags)]
    if owners:
        return VariantError(f"{head} but a flag of proposal {owners[0]!r}, which it does not enable: "
                            f"add proposals = [\"{owners[0]}\"]")
    flags = [f.name for p in enabled for f in _proposals().get_proposal(p).flags] if enabled else []
    close = difflib.get_close_matches(field, list(RULE_VALUES) + flags, n=3)
    if close:
        return VariantError(f"{head} nor a flag of its proposals; did you mean {' or '.join(close)}?")
    return VariantError(f"{head} nor a flag of its proposals ({', '.join(flags) or 'it enables none'})")


def _build(data: dict, where: str, base: Variant | None) -> Variant:
    """The variant ``data`` defines on ``base`` (None: the rule set ``data["base"]``), every value checked."""
    base_rules = base.rules if base is not None else RULE_SETS[data["base"]]
    own = data.get("proposals", [])
    _enable(own, where)
    enabled = tuple(sorted(set(base_rules.proposals) | set(own)))
    changes, flags = {}, dict(base_rules.flags)
    for field, value in data.get("changes", {}).items():
        if field in RULE_VALUES:
            error = rule_value_error(field, value)
            changes[field] = value
        elif (flag := _flag(field, enabled)) is not None:
            error = allowed_error(field, value, flag.values)
            flags[field] = value
        else:
            raise _no_such(field, enabled, where)
        if error:
            raise VariantError(f"{where}: [changes] {error}")
    # a value equal to the flag's default is no change: the rules carry the others only
    flags = {k: v for k, v in flags.items() if allowed_error(k, v, (_flag(k, enabled).default,))}
    inherited = dict(base.expect) if base is not None else {}
    na = tuple(base.not_applicable) if base is not None else ()
    return Variant(
        data["name"], data["summary"], data["source"],
        tuple(sorted(changes.items())),
        tuple(sorted({**inherited, **data.get("expect", {})}.items())),
        na + tuple(p for p in data.get("not_applicable", ()) if p not in na),
        tuple(data.get("worse_on", ())),
        data["base"],
        data.get("order", 1000),
        enabled,
        tuple(sorted(flags.items())),
        base.rules if base is not None else None,
    )


def _resolve(name: str, raw: dict[str, tuple[dict, str]], known: dict[str, Variant], built: dict[str, Variant],
             chain: tuple[str, ...] = ()) -> Variant:
    """Build variant ``name`` of ``raw`` after its base (a variant of ``raw`` or ``known``, or a rule set)."""
    if name in built:
        return built[name]
    data, where = raw[name]
    base = data["base"]
    if base == name:
        if base not in RULE_SETS:
            raise VariantError(f"{where}: base {base!r} is its own name, which only a rule set's file may give "
                               f"({', '.join(RULE_SETS)})")
        parent = None
    elif base in chain:
        loop = " -> ".join(chain[chain.index(base):] + (name, base))
        raise VariantError(f"{where}: its bases go round in a circle ({loop}); a chain of bases must end at a rule set")
    elif base in raw:
        parent = _resolve(base, raw, known, built, chain + (name,))
    elif base in known:
        parent = known[base]
    elif base in RULE_SETS:
        parent = None
    else:
        names = list(dict.fromkeys([*RULE_SETS, *known, *raw]))
        raise VariantError(f"{where}: base {base!r} is no variant and no rule set; choose one of: {', '.join(names)}")
    built[name] = _build(data, where, parent)
    return built[name]


def load_variant(text: str, where: str = "variant", stem: str | None = None,
                 known: dict[str, Variant] | None = None) -> Variant:
    """The variant a TOML text defines, its base one of ``known`` (default: this package's variants)
    or a rule set; ``VariantError`` (one line, naming ``where``) when malformed."""
    data = _parse(text, where, stem)
    name = data["name"]
    return _resolve(name, {name: (data, where)}, variants() if known is None else known, {})


def load_variants(folder: str | Path | None = None) -> dict[str, Variant]:
    """Every ``*.toml`` variant in ``folder`` (this package by default), each built after its base,
    by ``order`` then name."""
    root = resources.files(__package__) if folder is None else Path(folder)
    raw = {}
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            stem = entry.name[: -len(".toml")]
            raw[stem] = (_parse(entry.read_text(encoding="utf-8"), entry.name, stem), entry.name)
    built: dict[str, Variant] = {}
    for name in raw:
        _resolve(name, raw, {}, built)
    found = sorted(built.values(), key=lambda v: (v.order, v.name))
    return {v.name: v for v in found}


def variants() -> dict[str, Variant]:
    """This package's variants (``VARIANTS``), read on first use; ``VariantError`` for a malformed file."""
    loaded = globals().get("VARIANTS")
    if loaded is None:
        loaded = globals()["VARIANTS"] = load_variants()
    return loaded


def __getattr__(name: str):
    if name == "VARIANTS":  # read from the package's TOML files on first use
        return variants()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def lineage(name: str, known: dict[str, Variant] | None = None) -> list[str]:
    """The variants from the rule set ``name`` stands on to ``name`` itself, bases first."""
    known = variants() if known is None else known
    out = [name]
    while (v := known.get(out[0])) is not None and v.base != v.name and v.base in known:
        out.insert(0, v.base)
    return out


def get_variant(name: str) -> Variant:
    try:
        return variants()[name]
    except KeyError:
        raise KeyError(f"unknown variant {name!r}; `acp-lifecycle variants --list` shows them") from None
