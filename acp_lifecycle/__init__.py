"""acp-lifecycle: an executable formal model of the ACP v2 prompt lifecycle.

The import package has two parts, kept in the repository's top-level folders
(``pyproject.toml`` maps them):

* ``acp_lifecycle.model`` (folder ``model/``): the formal model, pure and
  deterministic, no I/O; it never imports ``sims``.
* ``acp_lifecycle.sims`` (folder ``sims/``): ways to run it (explorers, the
  transcript checker, bridges, diagrams, the ``acp-lifecycle`` command).
"""

import os as _os
import sys as _sys

__all__ = ["__version__", "docstring", "model_path"]

#: set to anything but "" or "0": the model's modules run interpreted even where they were compiled
PURE_ENV = "ACP_LIFECYCLE_PURE"


class _Interpreted:
    """A finder that loads every module of the package from its ``.py`` file, ahead of a compiled
    one beside it (packages are left to the usual finders)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if not name.startswith("acp_lifecycle.") or not path:
            return None
        from importlib.util import spec_from_file_location

        leaf = name.rpartition(".")[2]
        for d in path:
            src = _os.path.join(d, leaf + ".py")
            if _os.path.isfile(src):
                return spec_from_file_location(name, src)
        return None


def _locate(module: str) -> str | None:
    """The ``.py`` file of ``acp_lifecycle.X.Y`` without importing its packages (their
    ``__init__`` would load the model before the choice below is made)."""
    parts = module.split(".")
    path = list(__path__)
    for k in range(1, len(parts) - 1):
        name = ".".join(parts[: k + 1])
        spec = next((s for f in _sys.meta_path if hasattr(f, "find_spec")
                     for s in [f.find_spec(name, path)] if s is not None), None)
        if spec is None or not spec.submodule_search_locations:
            return None
        path = list(spec.submodule_search_locations)
    for d in path:
        src = _os.path.join(d, parts[-1] + ".py")
        if _os.path.isfile(src):
            return src
    return None


def _choose() -> str:
    """Which model runs: "compiled", or "interpreted" with why (no build, asked for, a source
    changed since the build: a compiled module would run code the source no longer says)."""
    if _os.environ.get(PURE_ENV, "") not in ("", "0"):
        _sys.meta_path.insert(0, _Interpreted)
        return f"interpreted ({PURE_ENV} set)"
    try:
        from . import build_info
    except ImportError:
        return "interpreted (no compiled build)"
    import hashlib

    for module, (_, sha) in build_info.SOURCES.items():
        src = _locate(module)
        if src is None:
            continue
        with open(src, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != sha:
                _sys.meta_path.insert(0, _Interpreted)
                return f"interpreted ({_os.path.basename(src)} changed since the build: python setup.py build_ext --inplace)"
    return "compiled"


#: "compiled" (the modules setup.py lists, compiled by mypyc) or "interpreted (why)"
model_path = _choose()


def docstring(fn) -> str:
    """``fn``'s docstring ("" when it has none), also where mypyc compiled it: a compiled function carries
    none, so the build keeps its source's (``setup.py``: ``build_info.DOCS``, from the very source it
    compiled, which ``_choose`` checked)."""
    doc = getattr(fn, "__doc__", None)
    if doc is None and model_path == "compiled":
        from . import build_info

        doc = build_info.DOCS.get(getattr(fn, "__module__", ""), {}).get(getattr(fn, "__qualname__", ""))
    return doc or ""


def __getattr__(name: str):
    # read from the installed metadata on first use (importlib.metadata takes
    # about 30 ms to load: every command would pay it)
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("acp-lifecycle")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            v = "0+unknown"
        globals()["__version__"] = v
        return v
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
