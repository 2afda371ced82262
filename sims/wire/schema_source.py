"""Where the official ACP schema comes from: the pinned npm package, the cache, ``--schema PATH``.

The schema is ``schema/v2/schema.json`` of the npm package
``@agentclientprotocol/sdk@2.4.0``. It is not vendored: ``pull()`` fetches
the package with npm's own client, checks the tarball against the pinned SRI
integrity, and caches only that one file under
``$XDG_CACHE_HOME/acp-lifecycle/sdk-2.4.0/schema.json`` (default
``~/.cache/...``). ``locate()`` finds it again (or takes ``--schema PATH``).
The v1 schema of the same package (``schema/v1/schema.json``, pinned the same
way, cached as ``schema.v1.json`` beside it) is ``version="v1"``.

``sims.wire.schema`` re-exports every public name here; the validator lives
there.

>>> sri(b"")[:20]
'sha512-z4PhNX7vuL3xV'
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

__all__ = [
    "PACKAGE",
    "VERSION",
    "VERSIONS",
    "PACKAGE_INTEGRITY",
    "SCHEMA_INTEGRITY",
    "SCHEMA_V1_INTEGRITY",
    "SchemaError",
    "cache_path",
    "locate",
    "pull",
    "sri",
    "cache_problem",
    "PULL_HINT",
]

PACKAGE = "@agentclientprotocol/sdk"
VERSION = "2.4.0"
#: SRI integrity of the npm tarball (what ``npm pack --json`` reports, and the
#: sha512 of the file it wrote).
PACKAGE_INTEGRITY = "sha512-7qJ8nnyj7WesC5ve185ioTpB2/svQoeGV4HA4nLEhgDUrcmBe54/08VcXc/oL4p14tDbxxECZzdYmUYQ+4l+Wg=="
#: The one file taken from it, and its own SRI integrity (checks the cached copy).
MEMBER = "package/schema/v2/schema.json"
SCHEMA_INTEGRITY = "sha512-Pcca8+QoZYoKnjIp4y3NJJ0VjBuyMIz8REgvBKSPSi/JqVLaScQTXKEHmMjlQ4PwCYnsrWZmRNHevTw6oJtVRw=="
#: The v1 schema of the same package (the v1 side of a bridge), and its SRI integrity.
MEMBER_V1 = "package/schema/v1/schema.json"
SCHEMA_V1_INTEGRITY = "sha512-cfTqIVVuE3y0wZ+VXEpLw/DNwph0xSdRFrbsjxkAHoTcxnKpmoj4H7SRTFvvUIzvW83gT9T/9aFtSrfO7yXcDA=="
VERSIONS = ("v1", "v2")


def _pin(version: str) -> tuple[str, str, str]:
    """(tarball member, its SRI integrity, cache file name) of a schema version."""
    if version == "v2":
        return MEMBER, SCHEMA_INTEGRITY, "schema.json"
    if version == "v1":
        return MEMBER_V1, SCHEMA_V1_INTEGRITY, "schema.v1.json"
    raise ValueError(f"schema version must be v1 or v2, not {version!r}")

#: How to get the pinned schema, said at the end of each error about it
PULL_HINT = "run `acp-lifecycle schema pull`"
_NPM_TIMEOUT = 300
_NETWORK_CODES = (
    "ECONNREFUSED",
    "ENOTFOUND",
    "EAI_AGAIN",
    "ETIMEDOUT",
    "ECONNRESET",
    "ENETUNREACH",
    "EHOSTUNREACH",
    "ENETDOWN",
    "ERR_SOCKET_TIMEOUT",
)


class SchemaError(Exception):
    """The schema cannot be fetched, found or read. The message is one line and says what to do."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


def sri(data: bytes) -> str:
    """The SRI integrity string (``sha512-<base64>``) of ``data``, as npm reports it."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


# ---------------------------------------------------------------------------
# Fetching and finding the schema


def cache_path(cache_dir: str | os.PathLike | None = None, version: str = "v2") -> Path:
    """Where the pulled schema lives: ``cache_dir/schema.json``, by default
    ``$XDG_CACHE_HOME/acp-lifecycle/sdk-2.4.0/schema.json`` (``~/.cache`` when
    ``XDG_CACHE_HOME`` is unset or not absolute)."""
    name = _pin(version)[2]
    if cache_dir is not None:
        return Path(cache_dir) / name
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "acp-lifecycle" / f"sdk-{VERSION}" / name


def cache_problem(path: Path, version: str = "v2") -> str | None:
    """Why the cached copy at ``path`` is not the pinned file (None: it is)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    member, integrity, _ = _pin(version)
    if sri(data) == integrity:
        return None
    try:
        json.loads(data)
        what = "its sha512 does not match"
    except ValueError:
        what = "it is not JSON and its sha512 does not match"
    return f"is corrupted ({what} {member} of {PACKAGE}@{VERSION})"


def pull(cache_dir: str | os.PathLike | None = None, version: str = "v2") -> Path:
    """Fetch the pinned schema into the user cache and return its path.

    Idempotent: a cached copy whose sha512 matches the pin is reused without
    touching the network; a corrupted one is fetched again and replaced. The
    package is fetched with ``npm pack`` (npm's own client and registry
    configuration), its tarball checked against npm's reported integrity and
    against ``PACKAGE_INTEGRITY``, and only ``schema/v2/schema.json`` is taken
    from it, written atomically.
    """
    target = cache_path(cache_dir, version)
    if target.is_file() and cache_problem(target, version) is None:
        return target
    data = _fetch_schema(version)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".schema.json.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)  # mkstemp makes it 0600; it is a public file
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as e:
        raise SchemaError(f"cannot write the schema cache {target}: {e.strerror or e}; set XDG_CACHE_HOME to a writable directory") from None
    return target


def _fetch_schema(version: str = "v2") -> bytes:
    """The bytes of schema/<version>/schema.json from the verified npm tarball."""
    member, integrity, _ = _pin(version)
    npm = shutil.which("npm")
    if npm is None:
        raise SchemaError(
            f"npm not found on PATH: install Node.js/npm to run `acp-lifecycle schema pull`, "
            f"or take schema/v2/schema.json from {PACKAGE}@{VERSION} yourself and pass --schema PATH"
        )
    spec = f"{PACKAGE}@{VERSION}"
    with tempfile.TemporaryDirectory(prefix="acp-lifecycle-pull-") as tmp:
        cmd = [npm, "pack", spec, "--json", "--ignore-scripts", "--pack-destination", tmp]
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=_NPM_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise SchemaError(
                f"`npm pack {spec}` timed out after {_NPM_TIMEOUT} s: check network access to the npm registry "
                "(`npm config get registry`), or pass --schema PATH"
            ) from None
        except OSError as e:
            raise SchemaError(f"cannot run npm ({e.strerror or e}): install Node.js/npm, or pass --schema PATH") from None
        report = _npm_json(proc.stdout)
        if proc.returncode != 0 or not isinstance(report, list) or not report:
            raise SchemaError(_npm_failure(spec, proc, report))
        entry = report[0]
        npm_integrity = entry.get("integrity") if isinstance(entry, dict) else None
        filename = entry.get("filename") if isinstance(entry, dict) else None
        if not isinstance(filename, str) or not isinstance(npm_integrity, str):
            raise SchemaError(f"`npm pack {spec} --json` reported no filename/integrity; upgrade npm, or pass --schema PATH")
        tarball = Path(tmp) / Path(filename).name
        try:
            blob = tarball.read_bytes()
        except OSError:
            raise SchemaError(f"`npm pack {spec}` wrote no tarball {tarball.name}; upgrade npm, or pass --schema PATH") from None
        actual = sri(blob)
        if actual != npm_integrity:
            raise SchemaError(
                f"integrity mismatch for {spec}: npm reported {npm_integrity} but the tarball hashes to {actual}; "
                "refusing it (clear the npm cache with `npm cache clean --force` and pull again)"
            )
        if actual != PACKAGE_INTEGRITY:
            raise SchemaError(
                f"integrity mismatch for {spec}: the tarball is {actual}, the pinned integrity is {PACKAGE_INTEGRITY}; "
                "refusing it (the registry served a different package: check `npm config get registry`)"
            )
        data = _extract(blob, spec, member)
    if sri(data) != integrity:
        raise SchemaError(f"integrity mismatch for {member} in {spec}: {sri(data)} is not the pinned {integrity}; refusing it")
    try:
        json.loads(data)
    except ValueError:
        raise SchemaError(f"{member} in {spec} is not JSON; refusing it") from None
    return data


def _extract(blob: bytes, spec: str, name: str = MEMBER) -> bytes:
    """Read ``name`` from the gzipped tarball in memory (nothing else is extracted)."""
    import io

    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            member = tar.getmember(name)
            if not member.isfile():
                raise KeyError(name)
            f = tar.extractfile(member)
            assert f is not None
            return f.read()
    except KeyError:
        raise SchemaError(f"{spec} has no {name}; refusing it") from None
    except (tarfile.TarError, OSError, EOFError) as e:
        raise SchemaError(f"cannot read the {spec} tarball ({e}); pull again") from None


def _npm_json(stdout: str):
    text = stdout.strip()
    for start in (0, *(i for i, ch in enumerate(text) if ch in "[{")):
        try:
            return json.loads(text[start:])
        except ValueError:
            continue
    return None


def _npm_failure(spec: str, proc: subprocess.CompletedProcess, report) -> str:
    code = summary = ""
    if isinstance(report, dict) and isinstance(report.get("error"), dict):
        code = str(report["error"].get("code") or "")
        summary = str(report["error"].get("summary") or "")
    if not summary:
        lines = [ln.removeprefix("npm error").strip() for ln in (proc.stderr or "").splitlines()]
        summary = next((ln for ln in lines if ln), f"exit status {proc.returncode}")
    for c in _NETWORK_CODES:
        if c in code or c in summary:
            code = code or c
            return (
                f"`npm pack {spec}` failed: no network access to the npm registry ({code}: {summary}); "
                "check the connection, proxy or `npm config get registry`, or pass --schema PATH"
            )
    label = f"{code}: " if code else ""
    return f"`npm pack {spec}` failed ({label}{summary}); fix npm's configuration, or pass --schema PATH"


def locate(path: str | os.PathLike | None = None, cache_dir: str | os.PathLike | None = None, version: str = "v2") -> Path:
    """The schema to validate against: ``path`` (``--schema PATH``; must exist and be
    JSON) if given, else the pulled copy of ``version`` (which must match the pin)."""
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise SchemaError(f"--schema {p}: no such file")
        try:
            json.loads(p.read_bytes())
        except OSError as e:
            raise SchemaError(f"--schema {p}: cannot be read ({e.strerror or e})") from None
        except (ValueError, RecursionError) as e:
            raise SchemaError(f"--schema {p}: not JSON ({e})") from None
        return p
    cached = cache_path(cache_dir, version)
    if cached.is_file():
        problem = cache_problem(cached, version)
        if problem:
            raise SchemaError(f"the cached schema {cached} {problem}: {PULL_HINT} to fetch it again")
        return cached
    raise SchemaError(f"no {version} schema: {PULL_HINT} or pass --schema PATH")
