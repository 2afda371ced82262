"""Pointing a published agent at the scripted provider: environment and settings files.

Each agent run gets a fresh directory with its own HOME, XDG dirs and working
directory, so no real configuration or credentials are read and nothing the
agent writes outlives the run. ``environment(provider, url, root)`` writes the
settings files the provider's agents read and returns the environment; only
the agent gets it (the probe itself keeps the caller's).

| provider | variables (value) | settings file |
|---|---|---|
| anthropic | ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, IS_SANDBOX=1 (claude refuses root otherwise), CLAUDE_CODE_MAX_RETRIES=0, DISABLE_TELEMETRY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC | - |
| gemini | GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, GEMINI_CLI_NO_RELAUNCH=true | ~/.gemini/settings.json: telemetry and updates off, one model attempt |
| openai | OPENAI_BASE_URL (URL/v1), OPENAI_API_KEY, OPENAI_MODEL | ~/.qwen/settings.json: auth type openai, no retries |
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["PROVIDERS", "environment", "guess_provider"]

PROVIDERS = ("anthropic", "openai", "gemini")
KEY = "probe-key-not-secret"
MODEL = "probe-model"

#: Variables the agent may keep from the caller: nothing that names a home, a key or a proxy.
_KEEP = ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "SYSTEMROOT", "NODE_OPTIONS")


def guess_provider(command: list[str]) -> str | None:
    """The provider an agent command line most likely uses, from its words."""
    words = " ".join(command).lower()
    if "claude" in words or "anthropic" in words:
        return "anthropic"
    if "gemini" in words:
        return "gemini"
    if "qwen" in words or "codex" in words or "openai" in words:
        return "openai"
    return None


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def environment(provider: str, url: str, root: Path) -> tuple[dict, Path]:
    """(the agent's environment, its working directory) for a run under ``root``."""
    home, work = root / "home", root / "work"
    for d in (home, work, home / ".config", home / ".cache", home / ".local/share", home / ".local/state"):
        d.mkdir(parents=True, exist_ok=True)
    env = {k: os.environ[k] for k in _KEEP if k in os.environ}
    env.update({
        "HOME": str(home), "USERPROFILE": str(home), "TMPDIR": str(root / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"), "XDG_STATE_HOME": str(home / ".local/state"),
        "NO_COLOR": "1", "CI": "1", "NO_PROXY": "127.0.0.1,localhost", "DO_NOT_TRACK": "1",
    })
    (root / "tmp").mkdir(exist_ok=True)
    if provider == "anthropic":
        env.update({
            "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": KEY, "IS_SANDBOX": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
            "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
        })
    elif provider == "gemini":
        env.update({"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": KEY, "GEMINI_CLI_NO_RELAUNCH": "true"})
        _write(home / ".gemini/settings.json", {
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "maxAttempts": 1},
            "telemetry": {"enabled": False},
            "privacy": {"usageStatisticsEnabled": False},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
        })
    elif provider == "openai":
        env.update({"OPENAI_BASE_URL": url + "/v1", "OPENAI_API_KEY": KEY, "OPENAI_MODEL": MODEL})
        _write(home / ".qwen/settings.json", {
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"generationConfig": {"maxRetries": 0}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        })
    else:
        raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}, not {provider!r}")
    return env, work
