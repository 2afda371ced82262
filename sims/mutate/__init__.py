"""The mutation harness: faults put into the model agent and clients, and which property catches each.

``acp-lifecycle mutate`` runs them; ``sims/mutate/mutants/`` holds one small file per mutant;
the seeded bugs of ``model/bugs.py`` are mutants too.
"""

from .core import KINDS, Mutant, MutantRun, get_mutant, all_mutants, run_mutant

__all__ = ["KINDS", "Mutant", "MutantRun", "get_mutant", "all_mutants", "run_mutant"]
