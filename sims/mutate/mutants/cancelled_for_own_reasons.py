"""Work the agent stops on its own (a timeout) ends with stopReason cancelled."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _end(s, cfg, rules, label, reason, errcode=0, report="error-idle", keep_tools=False):
        if reason == "end_turn":
            reason = "cancelled"  # "we stopped it"
        return original(s, cfg, rules, label, reason, errcode, report, keep_tools)

    return _end


MUTANT = Mutant(
    "cancelled-for-own-reasons",
    "agent ends work it stops for its own reasons with stopReason cancelled",
    ("S240-STOP-CANCELLED-ONLY-WHEN-CANCELLED",),
    "cancelled_only_when_cancelled",
    "tiny",
    patches=(wrap("agent", "end", _make),),
    source="esengine/DeepSeek-Reasonix#3509 (every turn reported cancelled)",
)
