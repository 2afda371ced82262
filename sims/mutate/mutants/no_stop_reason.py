"""Work ends with an idle that carries no stop reason."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _end(s, cfg, rules, label, reason, errcode=0, report="error-idle", keep_tools=False):
        if reason == "end_turn":
            reason = ""
        return original(s, cfg, rules, label, reason, errcode, report, keep_tools)

    return _end


MUTANT = Mutant(
    "no-stop-reason",
    "agent ends work with an idle state_update and no stopReason",
    ("S240-STOP-SHOULD-INCLUDE",),
    "idle_ending_work_has_stop_reason",
    "tiny",
    patches=(wrap("agent", "end", _make),),
)
