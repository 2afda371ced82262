"""Work that ends normally after one of its tool calls failed is reported as error."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _end(s, cfg, rules, label, reason, errcode=0, report="error-idle", keep_tools=False):
        if reason not in ("error", "cancelled") and any(st == "failed" for _, st in s.agent.work.tools):
            reason, errcode = "error", -32000
        return original(s, cfg, rules, label, reason, errcode, report, keep_tools)

    return _end


MUTANT = Mutant(
    "error-after-failed-tool",
    "agent ends work with stopReason error because a tool call failed, though the work went on",
    ("RFD-ERROR-MEANING", "RFD-ERROR-ONLY-ENDING-FAILURES"),
    "error_idle_only_for_failure",
    "failures",
    patches=(wrap("agent", "end", _make),),
)
