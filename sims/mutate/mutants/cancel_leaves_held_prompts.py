"""session/cancel stops the work but leaves prompts not yet inserted to be inserted later."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "cancel-leaves-held-prompts",
    "agent's session/cancel stops the running work only; prompts it holds are inserted afterwards",
    ("S240-CANCEL-SCOPE",),
    "cancelled_prompt_never_inserted",
    "failures",
    changes=(("cancel_rejects_held", "may"),),
)
