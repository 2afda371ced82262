"""The optional compiled model: the model's hot modules compiled by mypyc from their own source.

``pip install`` (and ``pip install -e``) builds them where mypyc and a C compiler are there, as a
package with optional extensions does; where either is missing, or the build fails, it says so in
one line and installs the pure-Python package, which behaves the same (slower). The modules are
listed in ``COMPILED``; the proposals (``model/proposals``) and every mutant stay interpreted and
run on the same path. A compiled function has no docstring: the build keeps its source's in
``build_info.DOCS`` (``acp_lifecycle.docstring``: the properties' summaries). mypyc compiles each
listed module as ``rewrite`` gives it: the checkout's source with every ``record._replace(...)``
call made a call of ``model/records.py``'s compiled ``replace_fields``, each statement on its line
(which makes the record with ``model/_tuples.c``, built beside them). ``acp_lifecycle/__init__.py`` loads the compiled modules
only while each one's source is the one it was built from, and never with
``ACP_LIFECYCLE_PURE=1`` (docs/performance.md, "A compiled model").

    pip install -e .                     # compiled where it can be
    ACP_LIFECYCLE_PURE=1 pip install -e .   # not compiled
    python setup.py build_ext --inplace  # compile again after editing a listed module
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import shutil
import sys

from setuptools import Distribution, Extension, setup
from setuptools.command.build_ext import build_ext

#: the modules compiled (the search's hot path: the successor function, the agent's and the clients'
#: steps, the judges' dispatch, the canonical form, the properties; the search's expand loop), as files of
#: the checkout.
#: The judges that keep a memory (ending, requests, resume, session) annotate it ``Memory`` (a tuple, or
#: an ``Items`` or ``Pairs`` past ``SMALL`` items: model/judges/_judge.py), which compiled code checks at
#: run time (annotated ``tuple`` it refused a long log: tests/test_modeltrace_dead.py).
COMPILED = (
    "model/state.py",
    "model/records.py",
    "model/agent.py",
    "model/clients.py",
    "model/system.py",
    "model/composed.py",
    "model/symmetry.py",
    "model/judges/_judge.py",
    "model/judges/messages.py",
    "model/judges/observe.py",
    "model/judges/records.py",
    "model/judges/ending.py",
    "model/judges/requests.py",
    "model/judges/resume.py",
    "model/judges/session.py",
    "model/properties/_core.py",
    "model/properties/rules.py",
    "model/properties/witnesses.py",
    "model/properties/keys.py",
    "sims/search/expand.py",
    "sims/search/fingerprint.py",
)
#: the import package's folders in the checkout (pyproject.toml's package-dir)
ROOTS = {"acp_lifecycle": "acp_lifecycle", "model": "acp_lifecycle.model", "sims": "acp_lifecycle.sims"}
GROUP = "acp_lifecycle._compiled"
#: the records made in one allocation (``model/_tuples.c``), which the compiled ``replace_fields`` calls
TUPLES = "acp_lifecycle.model._tuples"
PLACEHOLDER = f"{GROUP}__placeholder"
HERE = os.path.dirname(os.path.abspath(__file__))
MYPY_CONFIG = """[mypy]
# The model is annotated for people, not checked: mypyc compiles what the annotations say and
# checks them at run time; the differential test (tests/test_compiled.py) holds the two paths equal.
ignore_errors = True
ignore_missing_imports = True
follow_imports = silent
"""


def module_name(path: str) -> str:
    top, _, rest = path.partition("/")
    return ROOTS[top] + "." + rest[: -len(".py")].replace("/", ".")


def digest(path: str) -> str:
    with open(os.path.join(HERE, path), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def docstrings(path: str) -> dict[str, str]:
    """The docstrings of a module's functions, by qualified name (``Class.method``, ``outer.<locals>.inner``)."""
    with open(os.path.join(HERE, path), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out: dict[str, str] = {}

    def walk(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(child, clean=False)
                if doc is not None:
                    out[prefix + child.name] = doc
                walk(child, f"{prefix}{child.name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")

    walk(tree, "")
    return out


#: what a rewritten module calls instead of ``record._replace(...)`` (``model/records.py``)
REPLACE = "_acp_replace_fields"


def _is_replace(node) -> bool:
    f = getattr(node, "func", None)
    return (isinstance(node, ast.Call) and isinstance(f, ast.Attribute) and f.attr == "_replace" and not node.args
            and bool(node.keywords) and all(k.arg is not None for k in node.keywords))


def rewrite(path: str) -> str:
    """A compiled module's source as mypyc compiles it: every ``x._replace(name=value, ...)`` call
    becomes ``replace_fields(x, (names), (values))`` (``model/records.py``, compiled too), which
    makes the record without the interpreted frame of the ``_replace`` a namedtuple has (404 ns a
    call against 149 ns, about 30 a state): the same values, evaluated in the same order, and every
    statement on the line it has in the checkout (a compiled module's traceback names those lines).
    The call's own text is replaced, innermost calls first, padded to its number of lines; the
    import goes on the line of ``from __future__ import annotations``."""
    with open(os.path.join(HERE, path), "rb") as f:
        src = f.read()
    while True:
        calls = [n for n in ast.walk(ast.parse(src)) if _is_replace(n)]
        if not calls:
            break
        starts = [0]
        for line in src.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))

        def span(n) -> tuple[int, int]:
            return starts[n.lineno - 1] + n.col_offset, starts[n.end_lineno - 1] + n.end_col_offset

        spans = [span(c) for c in calls]
        inner = [(c, sp) for c, sp in zip(calls, spans)
                 if not any(o != sp and sp[0] <= o[0] and o[1] <= sp[1] for o in spans)]
        for c, (a, b) in sorted(inner, key=lambda x: x[1][0], reverse=True):
            obj = src[slice(*span(c.func.value))]
            names = b"".join(b'"%s", ' % k.arg.encode() for k in c.keywords)
            values = b"".join(src[slice(*span(k.value))] + b", " for k in c.keywords)
            new = REPLACE.encode() + b"(" + obj + b", (" + names + b"), (" + values + b"))"
            new = new[:-1] + b"\n" * (src[a:b].count(b"\n") - new.count(b"\n")) + b")"
            src = src[:a] + new + src[b:]
    future = b"from __future__ import annotations\n"
    if REPLACE.encode() in src and path != "model/records.py":
        assert future in src, f"{path}: a compiled module starts with {future!r}"
        src = src.replace(future, future[:-1] + b"; from acp_lifecycle.model.records import replace_fields as "
                          + REPLACE.encode() + b"\n", 1)
    return src.decode("utf-8")


def _stage(build_temp: str) -> tuple[str, list[str]]:
    """The package laid out under its import names (mypyc names a module by its folders): the
    checkout's files linked in, each compiled module written as ``rewrite`` makes it, and
    ``build_info``: which sources the build compiled."""
    stage = os.path.abspath(os.path.join(build_temp, "mypyc-src"))
    pkg = os.path.join(stage, "acp_lifecycle")
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(pkg)
    shutil.copy(os.path.join(HERE, "acp_lifecycle", "__init__.py"), pkg)
    for top in ("model", "sims"):
        for folder, dirs, files in os.walk(os.path.join(HERE, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            rel = os.path.relpath(folder, HERE)
            os.makedirs(os.path.join(pkg, rel), exist_ok=True)
            for name in files:
                path = os.path.join(rel, name)
                if path in COMPILED:
                    with open(os.path.join(pkg, path), "w", encoding="utf-8") as f:
                        f.write(rewrite(path))
                elif not name.endswith((".so", ".pyc")):
                    os.symlink(os.path.join(HERE, path), os.path.join(pkg, path))
    sources = {module_name(p): (p, digest(p)) for p in COMPILED}
    docs = {module_name(p): docstrings(p) for p in COMPILED}
    with open(os.path.join(pkg, "build_info.py"), "w") as f:
        f.write('"""Generated by setup.py: the modules compiled, the source each was compiled from, and the\n'
                'docstrings of its functions (a function mypyc compiles has none: ``acp_lifecycle.docstring``)."""\n\n')
        f.write(f"SOURCES: dict = {sources!r}\n")
        f.write(f"DOCS: dict = {docs!r}\n")
    with open(os.path.join(stage, "mypy.ini"), "w") as f:
        f.write(MYPY_CONFIG)
    files = ["acp_lifecycle/build_info.py"] + [f"acp_lifecycle/{p}" for p in COMPILED]
    return stage, ["--config-file", "mypy.ini", *files]


class OptionalBuild(build_ext):
    """Compile the listed modules with mypyc; on any failure, install the pure-Python package."""

    def finalize_options(self):
        if self.distribution.ext_modules and self.distribution.ext_modules[0].name == PLACEHOLDER:
            self.distribution.ext_modules = self._mypyc()
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def _mypyc(self) -> list:
        if os.environ.get("ACP_LIFECYCLE_PURE", "") not in ("", "0"):
            return []
        cwd = os.getcwd()
        try:
            from mypyc.build import mypycify

            stage, args = _stage(self.build_temp or os.path.join("build", "temp"))
            os.chdir(stage)  # mypy names a module by its folders, relative to here
            try:
                return mypycify(args, opt_level="3", group_name=GROUP, target_dir=os.path.join(stage, "c")) + [
                    Extension(TUPLES, sources=[os.path.relpath(os.path.join(HERE, "model", "_tuples.c"), cwd)])]
            finally:
                os.chdir(cwd)
        except (Exception, SystemExit) as e:  # no mypyc, a module mypyc cannot take
            _skipped(e)
            return []

    def run(self):
        if self.inplace:
            _drop_stale()
        try:
            super().run()
        except Exception as e:  # no C compiler, or it failed
            _skipped(e)
            self.extensions = []

    def get_outputs(self):
        return super().get_outputs() if self.extensions else []


def _drop_stale() -> None:
    """Remove from the checkout the compiled module of a source no longer in ``COMPILED`` (an earlier
    build's): Python would load it ahead of the ``.py``, and it calls into a group that no longer has it."""
    import glob

    for top in ("model", "sims"):
        for so in glob.glob(os.path.join(HERE, top, "**", "*.so"), recursive=True):
            rel = os.path.relpath(so, HERE)
            source = os.path.join(os.path.dirname(rel), os.path.basename(rel).split(".")[0] + ".py")
            if source not in COMPILED and os.path.exists(os.path.join(HERE, source)):
                os.remove(so)


def _skipped(e: BaseException) -> None:
    why = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
    print(f"acp-lifecycle: the compiled model was not built ({why}): the pure-Python model runs", file=sys.stderr)


class Platform(Distribution):
    """Once a build is tried, the wheel is a platform wheel even if nothing was compiled: the modules
    go to the wheel's root, where the platform wheel puts them (not to its .data/purelib)."""

    def has_ext_modules(self):
        return True


def _tried() -> bool:
    """Whether to try the compiled build: not when asked for the pure package, nor without mypyc
    (a build without the build-system's requirements, ``--no-build-isolation``): a pure wheel."""
    if os.environ.get("ACP_LIFECYCLE_PURE", "") not in ("", "0"):
        return False
    if importlib.util.find_spec("mypyc") is None:
        _skipped(ImportError("no mypyc"))
        return False
    return True


if _tried():
    # one placeholder: build_ext runs; OptionalBuild puts mypyc's in its place
    setup(ext_modules=[Extension(PLACEHOLDER, sources=[])], cmdclass={"build_ext": OptionalBuild},
          distclass=Platform)
else:
    setup()
