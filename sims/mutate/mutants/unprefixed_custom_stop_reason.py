"""A custom stop reason without the `_` prefix."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _end(s, cfg, rules, label, reason, errcode=0, report="error-idle", keep_tools=False):
        if reason == "_custom":
            reason = "completed"  # an extension value without its `_`
        return original(s, cfg, rules, label, reason, errcode, report, keep_tools)

    return _end


MUTANT = Mutant(
    "unprefixed-custom-stop-reason",
    "agent ends work with its own stop reason \"completed\", not `_`-prefixed",
    ("S240-STOP-UNKNOWN-RESERVED",),
    "custom_stop_reason_prefixed",
    "failures",
    patches=(wrap("agent", "end", _make),),
)
