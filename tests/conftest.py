"""The test session's own schema cache: the tests never read or write the user's.

Before collection (some test modules look for the schema at import), the
official schemas' cache (``$XDG_CACHE_HOME/acp-lifecycle``) is pointed at a
temporary directory for the session. A verified copy the user already pulled
is copied in (read only, no network); otherwise the schemas are pulled into it
with npm, once per session. Without npm and without a cached copy the tests
that need a schema skip with a one-line reason (``schema_unavailable``), and
with npm but no network they fail: CI must not pass without checking.
``$ACP_LIFECYCLE_SCHEMA`` (a path to the pinned v2 schema.json) is still honoured.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from acp_lifecycle.sims.wire import schema

_SAVED: dict = {}


def _verified_user_copy(version: str) -> Path | None:
    path = schema.cache_path(version=version)
    return path if path.is_file() and schema._cache_problem(path, version) is None else None


def pytest_configure(config):
    if "XDG_CACHE_HOME" in _SAVED:  # pytest-xdist workers or a nested session: already done
        return
    tmp = Path(tempfile.mkdtemp(prefix="acp-lifecycle-test-cache-"))
    copies = {v: _verified_user_copy(v) for v in schema.VERSIONS}
    _SAVED["XDG_CACHE_HOME"] = os.environ.get("XDG_CACHE_HOME")
    _SAVED["tmp"] = tmp
    os.environ["XDG_CACHE_HOME"] = str(tmp)
    for version, src in copies.items():
        target = schema.cache_path(version=version)
        if src is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
        elif shutil.which("npm"):
            try:
                schema.pull(version=version)
            except schema.SchemaError:
                pass  # the tests that need it say why (test_schema's fixture fails with the reason)


def pytest_unconfigure(config):
    tmp = _SAVED.pop("tmp", None)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    if "XDG_CACHE_HOME" in _SAVED:
        old = _SAVED.pop("XDG_CACHE_HOME")
        if old is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = old


def schema_unavailable() -> str | None:
    """Why no v2 schema can be had here (None: it can): no npm and no cached copy."""
    if os.environ.get("ACP_LIFECYCLE_SCHEMA") or schema.cache_path().is_file() or shutil.which("npm"):
        return None
    return "no v2 schema: npm is not installed and none was pulled (`acp-lifecycle schema pull` once, or set $ACP_LIFECYCLE_SCHEMA)"
