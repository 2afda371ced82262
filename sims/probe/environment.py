"""Pointing a published agent at the scripted provider: its HOME, environment and settings.

Each agent run gets a fresh directory with its own HOME, XDG dirs and working
directory, so no real configuration or credentials are read and nothing the
agent writes outlives the run. ``environment(profile, url, root)`` writes the
files of the agent's profile (profile.py) into that HOME and returns the
agent's environment and the arguments its profile appends; only the agent gets
them (the probe itself keeps the caller's).
"""

from __future__ import annotations

import os
from pathlib import Path

from .profile import APIS, KEY, MODEL, Profile, for_api, pick

__all__ = ["PROVIDERS", "environment", "guess_provider", "link_schemas"]

#: ``--provider`` values: the APIs, and ``openai`` for Chat Completions.
PROVIDERS = ("anthropic", "openai", "openai-responses", "gemini")

#: Variables the agent may keep from the caller: nothing that names a home, a key or a proxy.
_KEEP = ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "SYSTEMROOT", "NODE_OPTIONS")


def guess_provider(command: list[str]) -> str | None:
    """The API an agent command line most likely uses: its shipped profile's."""
    profile = pick(command)
    return profile.api if profile is not None else None


def environment(profile: Profile | str, url: str, root: Path) -> tuple[dict, Path, list[str]]:
    """(the agent's environment, its working directory, the arguments its profile appends) for a
    run under ``root``; ``profile`` may name an API (its shipped profile stands for it)."""
    if isinstance(profile, str):
        if profile not in PROVIDERS and profile not in APIS:
            raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}, not {profile!r}")
        profile = for_api(profile)
    home, work = root / "home", root / "work"
    for d in (home, work, root / "tmp", home / ".config", home / ".cache", home / ".local/share", home / ".local/state"):
        d.mkdir(parents=True, exist_ok=True)
    env = {k: os.environ[k] for k in _KEEP if k in os.environ}
    env.update({
        "HOME": str(home), "USERPROFILE": str(home), "TMPDIR": str(root / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"), "XDG_STATE_HOME": str(home / ".local/state"),
        "NO_COLOR": "1", "CI": "1", "NO_PROXY": "127.0.0.1,localhost", "DO_NOT_TRACK": "1",
    })
    places = {"url": url, "key": KEY, "model": MODEL, "home": str(home), "work": str(work)}
    env.update(profile.setup(places, home))
    return env, work, profile.arguments(places)


def link_schemas(home: Path) -> None:
    """Make the caller's pulled schemas visible under the run's HOME (``bridge serve``, started
    with the agent's environment for ``--live``, finds them there for its output gate)."""
    from acp_lifecycle.sims.wire.schema_source import cache_path

    for version in ("v1", "v2"):
        real = cache_path(version=version)
        if real.is_file():
            mine = home / ".cache" / real.relative_to(real.parents[2])
            mine.parent.mkdir(parents=True, exist_ok=True)
            if not mine.exists():
                mine.symlink_to(real)
