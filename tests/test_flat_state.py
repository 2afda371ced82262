"""bench/flat_state.py measures a flat encoding of the state; its figures mean something only if
the encoding loses nothing: distinct states give distinct integer tuples, equal ones equal tuples."""

import importlib.util
from pathlib import Path

SPEC = importlib.util.spec_from_file_location("flat_state", Path(__file__).resolve().parent.parent / "bench" / "flat_state.py")
flat_state = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(flat_state)


def test_the_flat_encoding_is_one_to_one_on_a_members_states():
    _, _, states = flat_state.walk("fifo", 1500)
    interner = flat_state.Interner()
    flats = {tuple(interner.flatten(s, [])) for s in states}
    assert len(states) == 1500 and len(flats) == len(states)
    # the same state flattens the same way again, and a different atom type is a different code
    assert tuple(interner.flatten(states[7], [])) in flats
    assert interner.atom(1) != interner.atom(True) and interner.atom(0) != interner.atom(False)


def test_the_benchmark_prints_its_rows():
    row = flat_state.measure("fifo", 300)
    assert row["states"] == 300 and row["hash flat"] > 0 and row["bytes flat array"] < row["bytes nested"]
