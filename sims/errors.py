"""Errors that any layer of ``sims`` may raise and the command line reports.

Defined here, below both the searches and the CLI, so that a search (such as
``search/dask.py``) can refuse bad input without importing the CLI, which
imports the searches. The strategy, as in h11: one class per way a user can be
told no; ``acp_lifecycle.sims.cli.main`` prints each as one line,
``acp-lifecycle: error: ...``, and exits with status 2. The model's own
definition-time error is ``acp_lifecycle.model.config.ConfigError`` (``model/``
never imports ``sims/``); a search too large for its bound raises
:class:`TooLarge` (``acp_lifecycle.sims.search.engine.TooLarge``; here so that
the CLI catches it without loading the searches).

>>> from acp_lifecycle.sims.errors import UsageError
>>> str(UsageError("--dask needs dask.distributed"))
'--dask needs dask.distributed'
"""

from __future__ import annotations

__all__ = ["TooLarge", "UsageError"]


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class TooLarge(RuntimeError):
    """The exploration passed its state limit."""
