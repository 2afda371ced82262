"""A client takes the next user message, an imported one, as its pending prompt."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "client-takes-import-as-own",
    "client associates its pending prompt with the next user message, here an imported one",
    ("RFD-ID-IMPORTED", "RFD-LOST-NO-GUESS"),
    "association_points_at_own_submission",
    "import",
    changes=(("client_associates_by", "order"),),
)
