"""`trace --model` grows with the length of the log, not with the number of ways to produce it.

The search keeps, per transcript line, the set of model states consistent with
the lines so far (normalised: IDs renumbered with their bindings, dead fields
forgotten, submissions made when they are due). On long conforming runs that
set stays small: the nodes per line stay nearly flat from 100 to 500 lines.
bench/modeltrace.py prints the times.
"""

import importlib.util
from pathlib import Path

import pytest

from acp_lifecycle.sims.wire.modeltrace import explain
from acp_lifecycle.sims.wire.transcript import export

_spec = importlib.util.spec_from_file_location("bench_modeltrace", Path(__file__).parents[1] / "bench" / "modeltrace.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.mark.parametrize("clients", [1, 2])
def test_a_long_conforming_run_is_explained_with_a_few_nodes_per_line(clients):
    lines = export(bench.conforming_run(100, clients, 7))
    sizes = []
    for n in (100, 500):
        cut = bench.quiet_prefix(lines, n)
        assert len(cut) > n * 0.75
        r = explain(list(enumerate(cut, 1)), complete=True)
        assert r.explained, r.text()
        sizes.append(r.nodes / len(cut))
    # (the model agent makes more choices since issue 11: a little more room)
    assert sizes[1] < 5 and sizes[1] < 2.5 * max(sizes[0], 1), sizes

