"""acp-lifecycle: an executable formal model of the ACP v2 prompt lifecycle.

The import package has two parts, kept in the repository's top-level folders
(``pyproject.toml`` maps them):

* ``acp_lifecycle.model`` (folder ``model/``): the formal model, pure and
  deterministic, no I/O; it never imports ``sims``.
* ``acp_lifecycle.sims`` (folder ``sims/``): ways to run it (explorers, the
  transcript checker, bridges, diagrams, the ``acp-lifecycle`` command).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("acp-lifecycle")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0+unknown"

__all__ = ["__version__"]
