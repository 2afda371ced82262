"""Observable differences between two rule sets: what one lets agents do on the wire that the other does not.

A model checker compares a spec with its properties; ``diff`` compares two
versions of the spec with each other. For two rule sets A and B on the same
configuration it finds the **distinguishing runs**: a run of A whose observable
behaviour is a prefix that B also allows, followed by one event B does not
allow. Each is reported for A-not-B and for B-not-A, grouped by the kind of
that event, shortest first.

What is observed (docs/spec-review.md explains the choices):

* every JSON-RPC message on each connection, *when its sender sends it*: a
  client's message when the client sends it, the agent's when the agent sends
  it. Everything else is internal: when the agent reads its input, holding,
  reserving, inserting, delivery to a client;
* a connection closing (connection loss, agent restart);
* the end of a run: a state where the model has no step left;
* all of it as one sequence, in the order it happens: the interleaving across
  connections is observed, because the agent is one process;
* message IDs, tool call ids, correlation tokens and JSON-RPC ids up to
  consistent renaming: each is numbered in order of first appearance (JSON-RPC
  ids per connection and sender, since that is their scope), so two runs are
  equivalent exactly when their canonical sequences are equal.

Client messages are *inputs*: the clients of both rule sets must be able to
send them. A variant that changes only the agent never refuses an input the
other accepts; if one does (its clients differ), that input is reported as
its own kind, ``client sends ...``.

How it is computed, without enumerating runs: an on-the-fly subset
construction. The search explores A's states together with the set of B's
states consistent with the same observations (B's internal steps closed under
epsilon; a B step that emits several messages is matched one message at a
time). A branch stops at the first event the set cannot match: that event is
distinguishing. Dijkstra's order on (observed events, steps) makes the first
witness of each kind a shortest one: fewest observed events, then fewest
steps.

Modules: ``observe`` (raw events, canonical form, kinds), ``product`` (the
subset construction, witnesses, suites), ``check`` (replaying and checking a
witness without the product's caches, the other rule set's answers),
``robust`` (each witness under larger bounds and the model's other readings).
"""

from .check import DiffError, allows, answers, check_witness, replay
from .observe import END, canonical, kind, names0, observe, observed_lines
from .product import Direction, MemberDiff, SuiteDiff, Witness, diff_member, diff_suite, rule_set
from .robust import Robustness, check_robust, robustness

__all__ = [
    "DiffError",
    "Witness",
    "Direction",
    "MemberDiff",
    "END",
    "observe",
    "canonical",
    "names0",
    "kind",
    "diff_member",
    "allows",
    "answers",
    "Robustness",
    "robustness",
    "check_robust",
    "replay",
    "check_witness",
    "observed_lines",
    "rule_set",
    "SuiteDiff",
    "diff_suite",
]
