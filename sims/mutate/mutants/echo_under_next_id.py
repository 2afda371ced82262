"""The echo carries the ID the agent will give next, not the message's own (an off-by-one)."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _echo(s, i, m, mode, rules):
        step = original(s, i, m, mode, rules)
        nxt = s.agent.next_id

        def bump(msg):
            if msg[0] in ("user_message", "chunk") and msg[1] == m.mid:
                return (msg[0], nxt) + msg[2:]
            return msg

        emitted = tuple((c, bump(x)) for c, x in step.emitted)
        down = tuple(tuple(bump(x) for x in chan) for chan in step.state.down)
        return step._replace(state=step.state._replace(down=down), emitted=emitted)

    return _echo


MUTANT = Mutant(
    "echo-under-next-id",
    "agent echoes the user message under the next ID its counter will give (an off-by-one)",
    ("RFD-ID-ECHO-SAME",),
    "echo_names_an_inserted_message",
    "tiny",
    patches=(wrap("agent", "echo", _make),),
)
