"""What the judges remember (model/judges/_judge.py): a set or map of more than ``SMALL`` items is an
``Items`` or ``Pairs``, which one message changes without copying or sorting it, so that ``trace``
spends as much per line at the end of a connection held for hours as at its start (issue 35); a
smaller one is the sorted tuple it always was. As a value of the explored state an ``Items`` is that
sorted tuple: equal, hashed, ordered (against a tuple too), printed, pickled and fingerprinted as it,
so that ``check`` explores the same states in the same order."""

import importlib.util
import pickle
import random
from pathlib import Path

import pytest

from acp_lifecycle.model.judges import (
    JUDGES,
    SMALL,
    Closed,
    Items,
    Pairs,
    PromptResult,
    Request,
    Response,
    StateUpdate,
    ToolUpdate,
    UserMessage,
    pair_value,
    put_pair,
    rename_items,
    sorted_tuple,
    union_items,
    with_item,
    without_item,
    without_pair,
)
from acp_lifecycle.sims.search.storage import portable_fingerprint
from acp_lifecycle.sims.wire.transcript import check_transcript, parse


def _random_items(rng: random.Random, mixed: bool) -> list:
    pool = list(range(12)) + ([f"m{i}" for i in range(6)] + [(1, "a"), (0, "b")] if mixed else [])
    return rng.sample(pool, rng.randint(0, 8))


def _order(a, b):
    try:
        return a < b, a <= b, a > b, a >= b, a == b
    except TypeError:  # values of different types at one place, as in the tuples
        return "TypeError"


@pytest.mark.parametrize("mixed", [False, True])
def test_items_are_the_sorted_tuple_they_stand_for(mixed):
    rng = random.Random(35)
    for _ in range(300):
        a, b = _random_items(rng, mixed), _random_items(rng, mixed)
        ta, tb = sorted_tuple(tuple(a)), sorted_tuple(tuple(b))
        x, y = Items(a), Items(reversed(a))
        # equal for equal content whatever the order it came in, and hashed alike
        assert x == y and hash(x) == hash(y) and tuple(x) == ta and len(x) == len(ta)
        # the helpers keep a small set a sorted tuple, built one item at a time as it always was
        one = ()
        for item in a:
            one = with_item(one, item)
        assert one == ta
        # ordered, printed and pickled as the sorted tuple (the symmetry reduction sorts clients by these)
        assert _order(x, Items(b)) == _order(ta, tb)
        assert repr(x) == repr(ta) and pickle.loads(pickle.dumps(x)) == x
        assert portable_fingerprint((x,)) == portable_fingerprint((ta,))


def test_items_change_by_one_and_leave_the_old_value_whole():
    x = Items([3, 1])
    y = x.add(2)
    assert tuple(x) == (1, 3) and tuple(y) == (1, 2, 3) and 2 in y and 2 not in x
    assert x.add(3) is x and x.discard(7) is x and tuple(y.discard(1)) == (2, 3) and tuple(y) == (1, 2, 3)
    assert tuple(x.union([5, 1, 4])) == (1, 3, 4, 5) and x.union([1, 3]) is x
    assert tuple(x.rename(lambda m: m * 10)) == (10, 30)
    # never equal to a tuple (the helpers never make both of one content), but ordered against one as its tuple
    assert x != (1, 3) and (1, 3) != x
    assert _order(x, (1, 2)) == _order((1, 3), (1, 2)) and _order((1, 2), x) == _order((1, 2), (1, 3))
    assert _order(x, ("a",)) == "TypeError"


def test_a_memory_is_a_sorted_tuple_up_to_small_items_and_an_items_beyond():
    """The form depends on the size alone: equal content, equal value, whatever the steps."""
    rng = random.Random(3)
    for _ in range(50):
        state, content = (), set()
        for _ in range(200):
            item = rng.randrange(3 * SMALL)
            if rng.random() < 0.6:
                state, content = with_item(state, item), content | {item}
            else:
                state, content = without_item(state, item), content - {item}
            assert type(state) is (Items if len(content) > SMALL else tuple)
            assert tuple(state) == tuple(sorted(content)) and state == _canonical(content)
        more = union_items(state, range(2 * SMALL))
        assert tuple(more) == tuple(sorted(content | set(range(2 * SMALL)))) and type(more) is Items
        assert tuple(rename_items(state, lambda m: -m)) == tuple(sorted(-m for m in content))
        assert type(rename_items(state, lambda m: -m)) is type(state)


def _canonical(content):
    out = ()
    for item in sorted(content, reverse=True):
        out = with_item(out, item)
    return out


def test_pairs_past_small_are_a_pairs_and_shrink_back():
    pairs = ()
    for k in range(SMALL + 1):
        pairs = put_pair(pairs, f"t{k:03d}", "pending")
    assert type(pairs) is Pairs and pair_value(pairs, "t000") == "pending" and pair_value(pairs, "x") is None
    assert pairs == Pairs(tuple(pairs)) and put_pair(pairs, "t000", "done") != pairs
    smaller = without_pair(pairs, "t005")
    assert type(smaller) is tuple and len(smaller) == SMALL and pair_value(smaller, "t005") is None
    assert without_pair(smaller, "nothing") == smaller


def test_pairs_are_the_sorted_pairs_they_stand_for():
    rng = random.Random(7)
    for _ in range(200):
        old, new = (), Pairs()
        for _ in range(rng.randint(0, 10)):
            key, value = rng.choice(["t1", "t2", "t3", "t4"]), rng.choice(["pending", "in_progress", "completed"])
            old, new = put_pair(old, key, value), new.set(key, value)
            assert tuple(new) == old and new.sorted() == old and repr(new) == repr(old)
            assert new == Pairs(reversed(old)) and hash(new) == hash(Pairs(old))
            assert new.get(key) == value and key in new and value not in new  # keys are looked up
            assert tuple(new.discard(key)) == without_pair(old, key)
    p = Pairs([("a", "x")])
    assert p.set("a", "x") is p and p.discard("b") is p and p != Items(["a"])


def test_a_status_a_transcript_gives_may_be_unhashable():
    t = JUDGES["no_update_after_idle_of_its_work"]
    state, _ = t.step(t.start, StateUpdate("running", None, None))
    state, why = t.step(state, ToolUpdate("call_1", {"odd": "status"}))
    again, _ = t.step(state, ToolUpdate("call_1", {"odd": "status"}))
    assert not why and again == state


class _Id(str):
    """A message ID that counts how often it is ordered against another."""

    ordered = 0

    def __lt__(self, other):
        _Id.ordered += 1
        return str.__lt__(self, other)

    def __gt__(self, other):
        _Id.ordered += 1
        return str.__gt__(self, other)

    __hash__ = str.__hash__


def test_a_long_session_is_judged_without_sorting_what_the_judges_remember():
    """One connection, one session, 3,000 prompts: the judges' memory grows with every message ID, and
    each message changes it by one (no sort of the IDs seen so far: with sorted tuples, about 17
    million comparisons; a tenth of that would still be quadratic)."""
    stateful = [j for j in JUDGES.values() if j.step is not None]
    states = {j.id: j.start for j in stateful}
    _Id.ordered = 0
    turns = 3000
    for turn in range(1, turns + 1):
        mid = _Id(f"m-{turn:06d}")
        for rec in (Request("client", turn, "session/prompt"), UserMessage(mid, ("hi",), False),
                    PromptResult(turn, mid), Response("client", turn), StateUpdate("running", None, None),
                    ToolUpdate(f"tool-{turn}", "completed"), StateUpdate("idle", "end_turn", None)):
            for j in stateful:
                if type(rec) in j.types:
                    if j.per == "session":
                        states[j.id], why = j.step(states[j.id], rec, True)
                    else:
                        states[j.id], why = j.step(states[j.id], rec)
                    assert not why or j.id == "one_response_per_request", why
    assert len(states["distinct_message_ids"].returned) == turns
    assert len(states["one_response_per_request"]) == turns
    assert len(states["no_update_after_idle_of_its_work"].ended) == turns
    assert _Id.ordered < 10 * turns, _Id.ordered
    state, _ = JUDGES["one_response_per_request"].step(states["one_response_per_request"], Closed())
    assert state == ()


def test_tool_calls_left_unfinished_do_not_make_each_idle_walk_them():
    """An agent that never ends its tool calls: each idle forgets only the final statuses, which the
    judges keep apart (a walk of every status at every idle would be quadratic in the tool calls)."""
    j = JUDGES["no_update_after_idle_of_its_work"]
    t = j.start
    for turn in range(200):
        t, _ = j.step(t, StateUpdate("running", None, None))
        t, _ = j.step(t, ToolUpdate(f"open-{turn}", "in_progress"))
        t, _ = j.step(t, ToolUpdate(f"done-{turn}", "completed"))
        assert tuple(t.finals) == (f"done-{turn}",)
        t, _ = j.step(t, StateUpdate("idle", "end_turn", None))
        assert not t.finals and pair_value(t.status, f"done-{turn}") is None
    assert type(t.status) is Pairs and len(t.status) == 200 and all(s == "in_progress" for _, s in t.status)


_spec = importlib.util.spec_from_file_location("bench_trace", Path(__file__).parents[1] / "bench" / "trace.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_the_benchmarks_one_connection_log_conforms(tmp_path):
    log = tmp_path / "one.jsonl"
    n = bench.build_one_connection(log, 300)
    entries = parse(log)
    assert n >= 300 and len(entries) == n
    assert {e["conn"] for _, e in entries} == {"editor"}
    assert sum(1 for _, e in entries if e["msg"].get("method") == "session/prompt") > 25
    assert sum(1 for _, e in entries if "tool_call_update" in str(e["msg"])) > 15
    assert check_transcript(entries) == []
