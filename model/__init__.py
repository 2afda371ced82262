"""The formal model of the ACP v2 prompt lifecycle: pure, deterministic, no I/O.

Everything in ``__all__`` is re-exported from the private-ish modules below;
``model`` never imports ``sims``.
"""

from .bugs import BUGS, Bug, get_bug
from .clauses import CITATIONS, CLAUSES, Clause, clause
from .judges import restate
from .config import EXTRA_LIMITS, LIMITS, RFD_RULES, RULE_SETS, S240_RULES, Config, ConfigError, Rules, rule_set
from .properties import BY_ID, PROPERTIES, Property
from .spec import VOCAB, Lifecycle
from .symmetry import SymmetryBroken
from .system import Step, System, initial_state, successors
from .wire import agent_message, client_message, step_messages

__all__ = [
    "restate",
    "BUGS",
    "BY_ID",
    "Bug",
    "CITATIONS",
    "CLAUSES",
    "Clause",
    "Config",
    "ConfigError",
    "ForegroundMachine",
    "EXTRA_LIMITS",
    "LIMITS",
    "Lifecycle",
    "MACHINES",
    "PROPERTIES",
    "PromptRequestMachine",
    "Property",
    "RFD_RULES",
    "RULE_SETS",
    "Rules",
    "S240_RULES",
    "Step",
    "SubmissionMachine",
    "SymmetryBroken",
    "System",
    "ToolCallMachine",
    "agent_message",
    "clause",
    "client_message",
    "get_bug",
    "initial_state",
    "step_messages",
    "successors",
    "transition_table",
    "rule_set",
    "PROPOSALS",
    "VARIANTS",
    "VOCAB",
]

#: loaded on first use: they build python-statemachine classes (and load that
#: library), which a search does not need
_MACHINES = ("MACHINES", "ForegroundMachine", "PromptRequestMachine", "SubmissionMachine", "ToolCallMachine",
             "transition_table")


def __getattr__(name: str):
    if name == "VARIANTS":  # read from the package's TOML files on first use
        from .variants import VARIANTS

        return VARIANTS
    if name == "PROPOSALS":  # the proposal registry: its files found on first use
        from .proposals import PROPOSALS

        return PROPOSALS
    if name in _MACHINES:
        from . import machines

        return getattr(machines, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The proposals (``model/proposals``): discovered once the model is loaded, so that their modules
# can build on every part of it.
from .proposals import registry as _registry  # noqa: E402
from .wire_rules import add_proposal_rules as _add_proposal_rules  # noqa: E402

try:
    _add_proposal_rules(_registry().values())
except ValueError:  # a malformed proposal: ``registry()`` raises it again where it is used (one line from the CLI)
    pass
