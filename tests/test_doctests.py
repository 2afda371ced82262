"""The examples in the package's docstrings run as tests.

pytest's ``--doctest-modules`` would import ``model/`` and ``sims/`` under their
folder names; the package is ``acp_lifecycle.model`` / ``acp_lifecycle.sims``,
so the modules are collected here by their installed names instead.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import acp_lifecycle


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(acp_lifecycle.__path__, "acp_lifecycle."):
        names.append(info.name)
    for top in ("acp_lifecycle.model", "acp_lifecycle.sims"):
        pkg = importlib.import_module(top)
        names.append(top)
        names += [i.name for i in pkgutil.walk_packages(pkg.__path__, top + ".")]
    return sorted(set(names))


def _with_examples() -> list[str]:
    finder = doctest.DocTestFinder()
    return [n for n in _modules() if any(t.examples for t in finder.find(importlib.import_module(n)))]


def test_some_modules_have_examples():
    assert len(_with_examples()) >= 3


@pytest.mark.parametrize("name", _with_examples())
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert attempted and failures == 0, f"{failures} of {attempted} docstring example(s) of {name} failed"
