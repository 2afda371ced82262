"""Exploring the model: exhaustive breadth-first search, suites of members, Hypothesis.

* ``explore``: BFS over one configuration, every property checked, shortest
  counterexamples, liveness on terminal states and bottom SCCs.
* ``check``: a named configuration (a suite of members), verdicts combined.
* ``fuzz``: Hypothesis stateful exploration for configurations too big to exhaust.
"""
