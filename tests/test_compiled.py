"""The compiled model (setup.py, mypyc) against the interpreted one: the same states, steps, messages
and findings on every member of ``default`` and every seeded bug's member.

The interpreted path is tested always; the comparison runs where the compiled build is there
(``pip install -e .`` with mypy and a C compiler), and skips with the reason where it is not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_lifecycle.model import BUGS

WALK = Path(__file__).with_name("compiled_walk.py")


def _run(args: list[str], pure: bool, code: str | None = None) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if k != "ACP_LIFECYCLE_PURE"}
    if pure:
        env["ACP_LIFECYCLE_PURE"] = "1"
    cmd = [sys.executable, "-c", code] if code else [sys.executable, str(WALK), *args]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def _compiled() -> str:
    return _run([], pure=False, code="import acp_lifecycle, json; print(json.dumps(acp_lifecycle.model_path))")[0]


def test_the_interpreted_path_runs_the_py_files_and_walks_a_member():
    got = _run(["tiny"], pure=True)
    assert got[0]["model_path"] == "interpreted (ACP_LIFECYCLE_PURE set)"
    assert got[1]["properties"] and all(summary for _, _, summary in got[1]["properties"])
    assert got[2]["member"] == "tiny" and got[2]["states"] > 10
    files = _run([], pure=True, code=(
        "import importlib, json\n"
        "names = ('model.system', 'model.agent', 'model.symmetry', 'model.judges.observe', 'sims.search.expand')\n"
        "print(json.dumps([importlib.import_module('acp_lifecycle.' + n).__file__ for n in names]))"))[0]
    assert all(f.endswith(".py") for f in files), files


def test_a_source_changed_since_the_build_runs_interpreted():
    """A compiled module whose source was edited would run the old code: the package loads every
    module from its .py instead (all of them: compiled modules call each other directly)."""
    code = (
        "import sys, types, json\n"
        "sys.modules['acp_lifecycle.build_info'] = types.SimpleNamespace(SOURCES={\n"
        "    'acp_lifecycle.model.system': ('model/system.py', '0' * 64)})\n"
        "import acp_lifecycle\n"
        "from acp_lifecycle.model import system, agent\n"
        "print(json.dumps([acp_lifecycle.model_path, system.__file__, agent.__file__]))\n"
    )
    path, *files = _run([], pure=False, code=code)[0]
    assert path.startswith("interpreted (system.py changed since the build"), path
    assert all(f.endswith(".py") for f in files), files


@pytest.mark.skipif(_compiled() != "compiled", reason="the compiled model is not built (setup.py: mypyc, a C compiler)")
def test_compiled_and_interpreted_walk_the_same_states_steps_messages_and_findings():
    args = ["default", *(f"bug:{name}" for name in sorted(BUGS))]
    compiled, interpreted = _run(args, pure=False), _run(args, pure=True)
    assert compiled[0]["model_path"] == "compiled"
    assert interpreted[0]["model_path"].startswith("interpreted")
    assert len(compiled) == len(interpreted) > len(args) + 1  # a line a member, default has several
    for a, b in zip(compiled[1:], interpreted[1:]):
        assert a == b


def _setup_module():
    """setup.py's definitions, without running ``setup()``."""
    import types

    path = Path(__file__).resolve().parent.parent / "setup.py"
    mod = types.ModuleType("acp_setup")
    mod.__file__ = str(path)
    exec(compile(path.read_text().split("\nif _tried():")[0], str(path), "exec"), mod.__dict__)
    return mod


def test_the_build_rewrites_every_replace_call_of_a_compiled_module_and_keeps_every_statement_on_its_line():
    import ast

    setup = _setup_module()
    rewritten = 0
    for path in setup.COMPILED:
        orig = (Path(setup.HERE) / path).read_text()
        new = setup.rewrite(path)
        before, after = ast.parse(orig), ast.parse(new)
        assert not [n for n in ast.walk(after) if setup._is_replace(n)], path
        # every statement starts where it does in the checkout (the import joins the __future__ line)
        lines = [sorted({n.lineno for n in ast.walk(t) if isinstance(n, ast.stmt)}) for t in (before, after)]
        assert lines[0] == lines[1], path
        assert new.count("\n") == orig.count("\n"), path
        rewritten += new.count(setup.REPLACE + "(")
    assert rewritten > 150  # agent, clients, system, symmetry, the judges' records


def _records(c_helper: bool):
    """``model/records.py`` with ``model/_tuples.c``'s ``replaced`` (as the package loads it), or without
    it (the file loaded on its own: its relative import fails, as where the build is not there)."""
    if c_helper:
        from acp_lifecycle.model import records

        if records._REPLACED is None:
            pytest.skip("model/_tuples.c is not built here (setup.py)")
        return records
    import importlib.util

    import acp_lifecycle.model

    source = Path(acp_lifecycle.model.__path__[0], "records.py")
    spec = importlib.util.spec_from_file_location("records_without_c", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module._REPLACED is None
    return module


@pytest.mark.parametrize("c_helper", [True, False], ids=["with-c", "without-c"])
def test_replace_fields_is_replace(c_helper):
    replace_fields = _records(c_helper).replace_fields
    from acp_lifecycle.model.state import Step, Used

    u = Used(failures=1)
    assert replace_fields(u, ("cancels", "losses"), (2, 3)) == u._replace(cancels=2, losses=3)
    assert type(replace_fields(u, ("cancels",), (2,))) is Used
    assert replace_fields(u, ("cancels", "cancels"), (2, 5)) == u._replace(cancels=5)
    step = Step(("A",), None, ())
    got = replace_fields(step, ("found",), ((1,),))
    assert got == step._replace(found=(1,)) and type(got) is Step and got.action is step.action
    with pytest.raises(TypeError):
        replace_fields(u, ("bogus",), (1,))
    with pytest.raises(TypeError):
        replace_fields(u, ("cancels", "bogus"), (1, 2))
    with pytest.raises(TypeError):
        u._replace(bogus=1)


def test_the_c_constructor_makes_what_the_namedtuple_makes():
    """Where the model runs compiled, the records' ``__new__`` is ``model/_tuples.c``'s ``record_new``:
    the same value and class as the NamedTuple's own, its defaults, and a TypeError where it gives one."""
    from typing import NamedTuple

    record_new = _records(True)._c_helper("record_new")

    class R(NamedTuple):
        a: int
        b: str = "x"
        c: tuple = ()

    assert record_new(R, 1) == R(1) and type(record_new(R, 1)) is R
    assert record_new(R, 1, c=(2,)) == R(1, c=(2,)) and record_new(R, b="y", a=0) == R(0, "y")
    for args, named in [((), {}), ((1, "y", (), 4), {}), ((1,), {"a": 2}), ((1,), {"d": 2})]:
        with pytest.raises(TypeError):
            R(*args, **named)
        with pytest.raises(TypeError):
            record_new(R, *args, **named)
    from acp_lifecycle.model.state import Step

    assert Step.__new__ is record_new  # the model's records, where it runs compiled
    code = "import json; from acp_lifecycle.model.state import Step; print(json.dumps(Step.__new__.__module__))"
    assert _run([], pure=True, code=code) == ["namedtuple_Step"]  # interpreted: the NamedTuple's own

    import gc

    from acp_lifecycle.model.state import Used

    replaced = _records(True)._REPLACED
    index = {f: i for i, f in enumerate(Used._fields)}
    u = Used(failures=1)
    got = replaced(u, index, ("losses",), (7,))
    assert got == u._replace(losses=7) and type(got) is Used and gc.is_tracked(got)
    assert replaced((1, 2, 3), {"b": 1}, ("b",), ("x",)) == (1, "x", 3)
    assert replaced(u, index, (), ()) == u and replaced(u, index, (), ()) is not u
    assert replaced(u, index, ("bogus",), (1,)) is None  # the caller's _replace says what is wrong
    assert replaced((1, 2), {"z": 5}, ("z",), (0,)) is None  # an index past the record's items
    for bad in [("not a record", index, ("losses",), (1,)), (u, index, ("losses",), (1, 2)), (u, index)]:
        with pytest.raises(TypeError):
            replaced(*bad)
