"""Scenarios: named, scripted runs through the model that show one rule each.

The explorers (``sims.search.explore``) search every interleaving for a
counterexample; a scenario is the opposite: one interleaving, written out step
by step, that shows a rule of the RFD doing what it says. The RFD's own
implementation checklist ("Exercise an ID assigned before insertion without an
early successful response, notifications before and after the response, ...")
is the list of scenarios, followed by the races and failure cases of its
"Report failures after insertion" section.

A scenario is data: a small ``Config`` (with ``down_latency=True``, so every
delivery to a client is a ``ClientReceive`` step of its own and the order of
response and echo is visible), ``Rules`` (usually ``RFD_RULES``), the action
labels of the run, and ``expect(final, trace)``, which asserts the outcome with
a sentence. ``run`` replays the labels from the initial state:

* each label must be the action of exactly one step the model offers, or
  ``ScenarioError`` names the step, the label and the labels that were enabled;
* after every step, every ``always`` and ``step`` property the RFD says must
  hold is checked (scenarios run the correct model), or ``ScenarioError``
  names the property;
* then ``expect`` runs; its ``AssertionError`` is the scenario failing.

So a scenario fails loudly when the model changes under it: a label that
disappears, a rule that stops holding, an outcome that differs.

>>> r = run("echo-before-response")
>>> r.final.clients[0].view
((1, ('a',), False),)
"""

from __future__ import annotations

from .catalogue import SCENARIOS, run
from .core import CHECKED, Scenario, ScenarioError, ScenarioRun, play, render

__all__ = ["Scenario", "ScenarioError", "ScenarioRun", "SCENARIOS", "run", "play", "render", "CHECKED"]
