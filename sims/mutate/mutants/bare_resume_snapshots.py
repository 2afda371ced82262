"""A resume snapshot of an idle session never repeats the last stop reason."""

from acp_lifecycle.sims.mutate.core import Mutant, filter_steps

MUTANT = Mutant(
    "bare-resume-snapshots",
    "agent's resume snapshot of an idle session never carries the last stop reason",
    ("S240-STATE-RESUME-SNAPSHOT",),
    "resumed_client_sees_current_state",
    "lost-response",
    patches=(filter_steps(lambda s, step: step.action[0] != "AgentResume" or step.action[3] != "snapshot"
                          or s.agent.fg != "idle" or not s.agent.stop),),
    equivalent=(
        "2.4.0: \"Repeated or resume snapshots may carry the last stop reason for context.\" May, not "
        "must: a bare idle snapshot is the same foreground state"
    ),
)
