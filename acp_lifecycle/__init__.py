"""acp-lifecycle: an executable formal model of the ACP v2 prompt lifecycle.

The import package has two parts, kept in the repository's top-level folders
(``pyproject.toml`` maps them):

* ``acp_lifecycle.model`` (folder ``model/``): the formal model, pure and
  deterministic, no I/O; it never imports ``sims``.
* ``acp_lifecycle.sims`` (folder ``sims/``): ways to run it (explorers, the
  transcript checker, bridges, diagrams, the ``acp-lifecycle`` command).
"""

__all__ = ["__version__"]


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
