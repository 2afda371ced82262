"""A rejected prompt stays queued and is inserted later."""

from acp_lifecycle.model.state import replace_at
from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _reject(a, idx, o, code, rules):
        first = not a.reqs[idx].answers
        phase = a.reqs[idx].phase
        a = original(a, idx, o, code, rules)
        if first:
            # "busy: try again" -- but the prompt is not taken off the queue
            a = a._replace(reqs=replace_at(a.reqs, idx, a.reqs[idx]._replace(phase=phase)))
        return a

    return _reject


MUTANT = Mutant(
    "inserted-after-rejection",
    "agent rejects a prompt with an error response and still inserts it from its queue",
    ("RFD-INSERT-REJECT-ERROR", "RFD-ERROR-MEANS-NOT-INSERTED"),
    "rejected_prompt_never_inserted",
    "tiny",
    patches=(wrap("agent", "reject", _make),),
)
