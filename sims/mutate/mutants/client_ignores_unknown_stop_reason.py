"""An idle with a stop reason the client does not know is ignored."""

from acp_lifecycle.model.config import STOP_REASONS
from acp_lifecycle.sims.mutate.core import Mutant, wrap

KNOWN = STOP_REASONS + ("",)


def _make(original):
    def _client_receive(s, c, cl, msg, rules):
        if msg[0] == "state" and msg[1] == "idle" and msg[2] not in KNOWN:
            return cl  # "unknown variant" -- the update is dropped
        return original(s, c, cl, msg, rules)

    return _client_receive


MUTANT = Mutant(
    "client-ignores-unknown-stop-reason",
    "client drops an idle whose stop reason it does not know, and keeps showing the work running",
    ("RFD-CLIENT-UNKNOWN-STOP-ENDS",),
    "client_sees_current_state",
    "failures",
    patches=(wrap("clients", "client_receive", _make),),
    source="DeepSeek-Reasonix#8241 (strict clients failing on an unknown stop reason)",
)
