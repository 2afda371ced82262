"""Is a distinguishing run robust, or an artefact of the bounds or of one reading of the text?

A witness of ``diff`` is a run of one rule set (``allowed``) whose last
observation the other (``refused``) cannot produce after the same prefix, *on
one member's bounds and under the model's reading of the text*. Each is checked
again under every **variation**, one at a time:

* each integer budget of the member one higher (``agent_work=2`` where it was
  1), past ``model.config.LIMITS`` too: those bound an exhaustive search, and
  this check only follows the run's observations (``limit`` bounds its sets);
* each exploration switch the member leaves off turned on (``hook=True``: a
  foreground hook before insertion; ``down_latency``, ``request_first``, ...);
* each alternative **reading** the model has of a rule (``READINGS``): the
  2.4.0 cancel rule read as ``trace --model`` reads it (``later``: the prompts a
  cancel covers are answered -32800 at any point after it, not in the step that
  receives it), SHOULDs optional (a lenient agent, as ``trace --model``),
  replay mixing whole messages and chunks (as ``trace --model``).

Under a variation the witness's observations are simulated on both rule sets
(``check.allows``): when ``refused`` then allows all of them (the distinguishing
one too) while ``allowed`` still does, the run's difference **vanishes** there,
and the witness is an artefact of that bound or reading. A witness no variation
removes is **robust**: it still tells the rule sets apart with one more of
anything and under every reading the model has. (A variation under which
``allowed`` no longer shows the run says nothing either way and is skipped.)

The check follows the witness's observations only, so it costs a fraction of
the diff itself: about 2 s for the six witnesses of ``diff rfd rfd+2.4.0`` on
``default`` (docs/spec-review.md).

>>> from acp_lifecycle.model.config import Config
>>> [v.name for v in variations(Config(name="doc", cancels=3), RFD)][:3]
['clients=2', 'prompts=2', 'total_prompts=1']
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from acp_lifecycle.model.config import LIMITS, RFD_RULES, Config, Rules
from acp_lifecycle.sims.search.explore import TooLarge

from .check import allows

__all__ = ["READINGS", "SWITCHES", "Variation", "Robustness", "variations", "robustness", "check_robust"]

RFD = RFD_RULES

#: Exploration switches a member may leave off; on, the model explores more (each is a bound too).
SWITCHES = ("hook", "hold", "reserve", "live_only", "chunks", "meta", "request_first", "down_latency")


def _cancel_later(r: Rules) -> Rules | None:
    return r.with_(cancel_rejects_held="later") if r.cancel_rejects_held == "must" else None


def _lenient(r: Rules) -> Rules | None:
    return None if r.lenient else r.with_(lenient=True)


def _replay_mixed(r: Rules) -> Rules | None:
    return None if r.replay_mixed else r.with_(replay_mixed=True)


#: The model's alternative readings: (name, what it reads, the rules under it or None where it changes nothing).
READINGS: tuple[tuple[str, str, Callable[[Rules], Rules | None]], ...] = (
    ("reading cancel_rejects_held=later",
     "the 2.4.0 cancel rule as trace --model reads it: the prompts a cancel covers are answered -32800 "
     "at any point after it, not in the step that receives it", _cancel_later),
    ("reading lenient", "SHOULDs optional: the agent may skip what a SHOULD asks (as trace --model)", _lenient),
    ("reading replay_mixed", "replay mixing whole messages and chunks (as trace --model)", _replay_mixed),
)


@dataclass(frozen=True)
class Variation:
    """One bound one higher, one switch on, or one reading: the member and both rule sets under it."""

    name: str
    cfg: Config
    #: rules -> the rules under this variation (identity for a bound)
    read: Callable[[Rules], Rules]


def variations(cfg: Config, *rule_sets: Rules) -> list[Variation]:
    """Every variation of ``cfg`` and of ``rule_sets`` (a reading that changes none of them is left out)."""
    same = lambda r: r  # noqa: E731 - a bound does not change the rules
    out = []
    for name in LIMITS:
        # past LIMITS too: they bound an exhaustive search, and this one follows a run's observations
        v = getattr(cfg, name) + 1
        out.append(Variation(f"{name}={v}", replace(cfg, **{name: v}), same))
    for name in SWITCHES:
        if not getattr(cfg, name):
            out.append(Variation(f"{name}=True", cfg.with_(**{name: True}), same))
    for name, _, fn in READINGS:
        if any(fn(r) is not None for r in rule_sets):
            out.append(Variation(name, cfg, lambda r, fn=fn: fn(r) or r))
    return out


@dataclass
class Robustness:
    """What the variations did to one witness."""

    #: True: no variation removes the difference; False: one does; None: not checked
    robust: bool | None = None
    #: the variations under which the difference vanishes, in the order checked
    vanishes_under: list[str] = field(default_factory=list)
    #: the variations checked (those under which ``allowed`` still shows the run)
    checked: list[str] = field(default_factory=list)
    #: variations too large to check (``limit``)
    too_large: list[str] = field(default_factory=list)

    @property
    def artefact_of(self) -> str:
        """The first variation that removes the difference ("" when robust)."""
        return self.vanishes_under[0] if self.vanishes_under else ""

    def data(self) -> dict:
        out: dict = {"robust": self.robust}
        if self.robust is False:
            out["artefact_of"] = self.artefact_of
            out["vanishes_under"] = list(self.vanishes_under)
        out["checked"] = list(self.checked)
        if self.too_large:
            out["too_large"] = list(self.too_large)
        return out


def robustness(w, cfg: Config, allowed: Rules, refused: Rules, *, limit: int = 200_000,
               tick: Callable[[], None] | None = None) -> Robustness:
    """Check one witness under every variation of its member and rule sets."""
    r = Robustness()
    n = len(w.events)
    for v in variations(cfg, allowed, refused):
        a2, b2 = v.read(allowed), v.read(refused)
        try:
            if allows(v.cfg, a2, w.events, limit) == n:
                r.checked.append(v.name)
                if allows(v.cfg, b2, w.events, limit) == n:
                    r.vanishes_under.append(v.name)
        except TooLarge:
            r.too_large.append(v.name)
        if tick:
            tick()
    r.robust = not r.vanishes_under
    return r


def check_robust(d, *, progress: Callable[[int, int], None] | None = None) -> None:
    """Check every witness of a ``SuiteDiff`` and set its ``robustness``; ``progress(done, total)``."""
    cfgs = {m.config.name: m.config for m in d.members}
    todo = [(w, d.a, d.b) for w in d.only_a.values()] + [(w, d.b, d.a) for w in d.only_b.values()]
    total = sum(len(variations(cfgs[w.member], x, y)) for w, x, y in todo)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress:
            progress(done[0], total)

    for w, x, y in todo:
        w.robustness = robustness(w, cfgs[w.member], x, y, tick=tick)
