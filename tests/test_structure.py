"""The house rules of the source, read with ``ast`` (nothing is imported or run).

1. No function in ``model/`` or ``sims/`` is over 80 lines (a screen): past that,
   a function holds more than one idea and should be split along its seams.
2. No module is over 800 lines (one concept per module, h11's size).
3. No import cycle between modules, counting the imports inside functions: a
   cycle hidden in a function is still a cycle, only one that fails later.
4. No private name (``_x``) is imported from another module: what a module
   lends to others is public, and what it keeps private can change freely.
   A private *module* (``properties/_core.py``) may be imported by the modules of
   its own package; the names in it that they use are public.
5. The layers point down: ``model/`` never imports ``sims/``, and only the command
   line imports the command line.
6. The ways of running the model (the search and fuzz, the explorer, the model agent,
   ``trace --model`` and the scenarios) reach it only through the model object: they
   import from the model only the names the package ``acp_lifecycle.model`` exports for
   them (``Lifecycle``, the values that make one, the vocabulary and the registries),
   never one of its modules, and ask a ``Lifecycle`` for everything else (issue 33).

The import name ``acp_lifecycle.model`` lives in the folder ``model/`` (and
``acp_lifecycle.sims`` in ``sims/``): the mapping is read from
``[tool.setuptools.package-dir]`` in ``pyproject.toml``, as setuptools reads it.

Where a violation must stay for now, it is listed below with the reason; an entry
that no longer matches anything fails the test, so the lists only shrink.
"""

from __future__ import annotations

import ast
import tomllib
from functools import cache
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
MAX_FUNCTION = 80
MAX_MODULE = 800

# (path, function name): why it stays over MAX_FUNCTION lines for now
LONG_FUNCTIONS: dict[tuple[str, str], str] = {
}

# path: why it stays over MAX_MODULE lines for now
LONG_MODULES: dict[str, str] = {
}

# the modules of one cycle (a strongly connected component), sorted: why it stays for now
CYCLES: dict[tuple[str, ...], str] = {}

# (module, the CLI module it imports): why a module outside the command line reads the CLI for now
UPWARD: dict[tuple[str, str], str] = {
}

# (importing module, module it imports from): why private names cross between them for now
PRIVATE_IMPORTS: dict[tuple[str, str], str] = {
}

# the ways of running the model that reach it only through the model object: packages and modules
THROUGH_THE_MODEL_OBJECT = (
    "acp_lifecycle.sims.search",
    "acp_lifecycle.sims.explore",
    "acp_lifecycle.sims.agent",
    "acp_lifecycle.sims.scenarios",
    "acp_lifecycle.sims.wire.modeltrace",
    "acp_lifecycle.sims.wire.abstraction",
    "acp_lifecycle.sims.wire.bounds",
    "acp_lifecycle.sims.wire.settled",
)

# what they may import from the package acp_lifecycle.model (model/__init__.py)
MODEL_FACADE = frozenset({
    "Lifecycle", "VOCAB", "Config", "ConfigError", "Rules", "RULE_SETS", "RFD_RULES", "S240_RULES", "rule_set",
    "LIMITS", "Property", "System", "Step", "SymmetryBroken", "BUGS", "VARIANTS", "PROPOSALS",
    "restate",  # a finding's text with a suffix, naming the clause of its case (model.judges.Cite)
})


@cache
def modules() -> dict[str, Path]:
    """Every module of the import package, by its dotted name, from pyproject's package-dir."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found = {}
    for package, folder in data["tool"]["setuptools"]["package-dir"].items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _source(module: str, node: ast.ImportFrom) -> str | None:
    """The dotted module an ``from X import ...`` reads from, relative imports resolved."""
    if not node.level:
        return node.module
    package = module.split(".")
    if modules()[module].name != "__init__.py":
        package.pop()
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def imports(module: str):
    """(module imported, name or None) for each import of ``module`` within the package, at any depth."""
    known = modules()
    for node in ast.walk(tree(known[module])):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            source = _source(module, node)
            if source not in known:
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                # `from package import submodule` imports the submodule, not the package's name
                yield (sub, None) if sub in known else (source, alias.name)


def long_functions() -> dict[tuple[str, str], int]:
    found = {}
    for path in modules().values():
        if rel(path).split("/")[0] not in ("model", "sims"):
            continue
        for node in ast.walk(tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION:
                    found[(rel(path), node.name)] = length
    return found


def long_modules() -> dict[str, int]:
    lengths = {rel(p): len(p.read_text().splitlines()) for p in modules().values()}
    return {p: n for p, n in lengths.items() if n > MAX_MODULE}


def cycles() -> set[tuple[str, ...]]:
    graph = nx.DiGraph()
    for module in modules():
        graph.add_node(module)
        for imported, _name in imports(module):
            if imported != module:
                graph.add_edge(module, imported)
    return {tuple(sorted(c)) for c in nx.strongly_connected_components(graph) if len(c) > 1}


def private_imports() -> dict[tuple[str, str], list[str]]:
    """(importing module, module imported from): the private names it takes."""
    found: dict[tuple[str, str], list[str]] = {}
    for module in modules():
        for imported, name in imports(module):
            if name is not None and name.startswith("_") and not name.startswith("__"):
                found.setdefault((module, imported), []).append(name)
            elif name is None and imported.rsplit(".", 1)[-1].startswith("_"):
                # a private module, imported from outside the package that holds it
                package = imported.rsplit(".", 1)[0]
                if not module.startswith(package + "."):
                    found.setdefault((module, package), []).append(imported.rsplit(".", 1)[-1])
    return found


def model_imports_past_the_object() -> dict[str, list[str]]:
    """Module -> what it imports from the model other than the facade's names (any depth)."""
    found: dict[str, list[str]] = {}
    for module in modules():
        if not any(module == m or module.startswith(m + ".") for m in THROUGH_THE_MODEL_OBJECT):
            continue
        for imported, name in imports(module):
            if imported != "acp_lifecycle.model" and not imported.startswith("acp_lifecycle.model."):
                continue
            if imported != "acp_lifecycle.model" or name not in MODEL_FACADE:
                found.setdefault(module, []).append(imported if name is None else f"{imported}.{name}")
    return found


def _check(found, allowed: dict, what: str):
    if not isinstance(found, dict):
        found = dict.fromkeys(found)
    new = {k: v for k, v in found.items() if k not in allowed}
    stale = sorted(set(allowed) - set(found))
    assert not new, f"{what}: {new}"
    assert not stale, f"allow-listed but no longer true (remove the entry): {stale}"


def test_no_function_in_model_or_sims_is_over_80_lines():
    _check(long_functions(), LONG_FUNCTIONS, f"functions over {MAX_FUNCTION} lines (split them along their seams)")


def test_no_module_is_over_800_lines():
    _check(long_modules(), LONG_MODULES, f"modules over {MAX_MODULE} lines")


def test_no_import_cycle_between_modules_counting_imports_inside_functions():
    _check(cycles(), CYCLES, "modules that import each other (directly or around a cycle)")


def test_no_private_name_is_imported_from_another_module():
    _check(private_imports(), PRIVATE_IMPORTS, "private names imported across modules (make them public)")


def test_the_checks_see_the_whole_package():
    # a mapping that went wrong would find nothing and pass every check above
    names = modules()
    assert "acp_lifecycle.model.system" in names and "acp_lifecycle.sims.cli" in names
    assert any(name is not None for m in names for _i, name in imports(m))
    # and an import inside a function counts (dask's UsageError was one, until sims/errors.py)
    assert ("acp_lifecycle.model.wire", "step_messages") in set(imports("acp_lifecycle.sims.wire.schema"))


def test_the_layers_point_down_model_below_sims_and_only_the_command_line_imports_the_cli():
    # model/ is pure and never imports sims/; a search, a bridge or a diagram that needs an
    # error the CLI reports takes it from sims/errors.py, not from the CLI (dask did, once)
    upward = []
    for module in modules():
        for imported, _name in imports(module):
            if module.startswith("acp_lifecycle.model") and imported.startswith("acp_lifecycle.sims"):
                upward.append((module, imported))
            cli = ("acp_lifecycle.sims.cli", "acp_lifecycle.cli")
            if imported.startswith(cli) and not module.startswith(cli):
                upward.append((module, imported))
    assert set(upward) == set(UPWARD), set(upward) ^ set(UPWARD)


def test_the_search_fuzz_explorer_agent_trace_model_and_scenarios_reach_the_model_through_its_object():
    found = model_imports_past_the_object()
    assert not found, f"imports from the model past its object (ask a Lifecycle, or add a method to it): {found}"
    # the check sees those modules, their imports inside functions, and every kind of import
    names = modules()
    for m in THROUGH_THE_MODEL_OBJECT:
        assert m in names, m
    assert ("acp_lifecycle.model", "Lifecycle") in set(imports("acp_lifecycle.sims.search.fuzz"))
    assert ("acp_lifecycle.model", "VARIANTS") in set(imports("acp_lifecycle.sims.explore.model_access"))


def test_the_facade_exports_every_name_the_ways_of_running_it_may_import():
    init = tree(modules()["acp_lifecycle.model"])
    exported = next(ast.literal_eval(node.value) for node in init.body if isinstance(node, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
    assert MODEL_FACADE <= set(exported), MODEL_FACADE - set(exported)
