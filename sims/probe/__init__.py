"""Probing a published ACP agent offline: a scripted provider, an ACP v1 client, the judge.

``probe(command, provider, scenarios, out)`` (run.py) runs the agent once per
scenario (scenarios.py) against a ``sims.provider.Provider`` it points the
agent at (environment.py), as an ACP v1 client over stdio (client.py),
records each run as a transcript and judges it (judge.py: the v1 schema, the
v1-to-v2 bridge, ``trace``'s rules). docs/probe.md shows it on three agents.
"""

from .environment import PROVIDERS, environment, guess_provider
from .judge import Finding, judge, load_validators
from .run import RunResult, probe, run_scenario
from .scenarios import DESCRIPTIONS, SCENARIOS

__all__ = ["PROVIDERS", "SCENARIOS", "DESCRIPTIONS", "Finding", "RunResult", "environment", "guess_provider",
           "judge", "load_validators", "probe", "run_scenario"]
