"""Agent profiles: how to start a published agent and point it at the scripted provider.

A profile is a small TOML file (the shipped ones are in ``profiles/``; docs/probe.md teaches
writing one)::

    name = "codex-acp"
    about = "Zed's ACP adapter for OpenAI Codex"
    package = "@zed-industries/codex-acp"      # the npm package, for installing it
    version = "0.16.0"                          # the version measured (docs/probe.md)
    match = ["codex-acp"]                       # a command line holding one of these picks it
    api = "openai-responses"                    # anthropic | openai-chat | openai-responses | gemini
    command = ["${modules}/@zed-industries/codex-acp-linux-x64/bin/codex-acp"]
    args = ["-c", "model_provider=\\"probe\\""]  # appended to the agent's command line
    dirs = [".codex"]                           # made in the run's HOME

    [env]                                       # the agent's environment (a table: JSON text)
    CODEX_HOME = "${home}/.codex"

    [files]                                     # files in the run's HOME: a table is written as JSON
    ".qwen/settings.json" = { model = { generationConfig = { maxRetries = 0 } } }

    [auth]
    method = "openai-api-key"                   # `authenticate` with it before session/new

Every string may hold ``${url}`` (the provider, ``http://127.0.0.1:PORT``), ``${key}`` (a dummy
API key), ``${model}`` (``probe-model``), ``${home}`` and ``${work}`` (the run's HOME and working
directory); ``command`` also ``${modules}``, the ``node_modules`` folder the package is installed
in (``Profile.command``). Without ``[auth]`` the probe authenticates only when ``session/new``
asks for it (error -32000), with a method the agent lists that takes an API key.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template

__all__ = ["APIS", "Profile", "ProfileError", "load_profile", "shipped", "pick", "for_api", "resolve"]

#: The provider APIs a profile may name, and the ``--provider`` spelling of each.
APIS = ("anthropic", "openai-chat", "openai-responses", "gemini")
ALIASES = {"openai": "openai-chat"}
KEY = "probe-key-not-secret"
MODEL = "probe-model"
_PLACES = {"url", "key", "model", "home", "work"}
_FIELDS = {"name", "about", "package", "version", "match", "api", "command", "args", "dirs", "env", "files", "auth"}


class ProfileError(ValueError):
    """An unusable profile (one line)."""


@dataclass(frozen=True)
class Profile:
    name: str
    api: str
    about: str = ""
    package: str = ""
    version: str = ""
    match: tuple[str, ...] = ()
    command_template: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    env: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    auth: str | None = None  # a method id; "none": never authenticate
    source: str = ""  # the file it was read from

    def command(self, modules: Path) -> list[str]:
        """The agent's command line when the package is installed in ``modules`` (a node_modules
        folder); the run appends ``arguments``."""
        return [Template(a).safe_substitute(modules=str(modules)) for a in self.command_template]

    def arguments(self, places: dict) -> list[str]:
        """The profile's ``args``, filled in, appended to the agent's command line for a run."""
        return [self.fill(a, places) for a in self.args]

    def fill(self, text: str, places: dict) -> str:
        return Template(text).substitute(places)

    def setup(self, places: dict, home: Path) -> dict:
        """Write the profile's dirs and files under ``home``; return its environment variables."""
        for d in self.dirs:
            (home / d).mkdir(parents=True, exist_ok=True)
        for rel, content in self.files.items():
            path = home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            text = _fill_json(content, places) if isinstance(content, dict) else self.fill(content, places)
            path.write_text(json.dumps(text, indent=2) + "\n" if isinstance(text, dict) else text, encoding="utf-8")
        return {k: json.dumps(_fill_json(v, places)) if isinstance(v, dict) else self.fill(v, places)
                for k, v in self.env.items()}


def _fill_json(value, places: dict):
    if isinstance(value, str):
        return Template(value).substitute(places)
    if isinstance(value, dict):
        return {k: _fill_json(v, places) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_json(v, places) for v in value]
    return value


def _strings(where: str, key: str, value) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProfileError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def _check_places(where: str, value, allowed: set) -> None:
    """Every ``${name}`` in ``value`` (a string, or the strings of a table) is one the probe fills."""
    if isinstance(value, dict):
        for v in value.values():
            _check_places(where, v, allowed)
    elif isinstance(value, list):
        for v in value:
            _check_places(where, v, allowed)
    elif isinstance(value, str):
        for m in re.finditer(r"\$(?:\{(\w*)\}|(\w+)|(.?))", value):
            name = m.group(1) if m.group(1) is not None else m.group(2)
            if name is None and m.group(3) == "$":
                continue
            if name not in allowed:
                raise ProfileError(f"{where}: unknown placeholder {m.group(0)!r} (known: "
                                   f"{', '.join('${' + p + '}' for p in sorted(allowed))}; $$ for a dollar)")


def parse_profile(doc: dict, where: str) -> Profile:
    unknown = sorted(set(doc) - _FIELDS)
    if unknown:
        raise ProfileError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(sorted(_FIELDS))})")
    name, api = doc.get("name"), ALIASES.get(doc.get("api"), doc.get("api"))
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise ProfileError(f"{where}: name must be a word (letters, digits, . _ -)")
    if api not in APIS:
        raise ProfileError(f"{where}: api must be one of {', '.join(APIS)}, not {doc.get('api')!r}")
    for key in ("about", "package", "version"):
        if not isinstance(doc.get(key, ""), str):
            raise ProfileError(f"{where}: {key} must be a string")
    lists = {key: _strings(where, key, doc.get(key, [])) for key in ("match", "command", "args", "dirs")}
    env, files, auth = doc.get("env", {}), doc.get("files", {}), doc.get("auth", {})
    if not isinstance(env, dict) or not all(isinstance(v, (str, dict)) for v in env.values()):
        raise ProfileError(f"{where}: env is a table of strings (or of tables, passed as JSON text)")
    if not isinstance(files, dict) or not all(isinstance(v, (str, dict)) for v in files.values()):
        raise ProfileError(f"{where}: files is a table of file -> text (or a table, written as JSON)")
    for rel in files:
        if rel.startswith("/") or ".." in Path(rel).parts:
            raise ProfileError(f"{where}: file {rel!r} must be a path inside the run's HOME")
    if not isinstance(auth, dict) or set(auth) - {"method"} or not isinstance(auth.get("method", ""), str):
        raise ProfileError(f"{where}: auth is a table with one string, method")
    _check_places(where, [env, files, list(lists["args"])], _PLACES)
    _check_places(where, list(lists["command"]), {"modules"})
    return Profile(name, api, doc.get("about", ""), doc.get("package", ""), doc.get("version", ""),
                   lists["match"], lists["command"], lists["args"], lists["dirs"], env, files,
                   auth.get("method") or None, where)


def load_profile(path: str | Path) -> Profile:
    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ProfileError(f"{path}: cannot read: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ProfileError(f"{path}: not TOML ({e})") from None
    return parse_profile(doc, str(path))


@functools.lru_cache(maxsize=1)
def shipped() -> dict[str, Profile]:
    """The profiles that ship with the tool, by name (read once)."""
    out = {}
    for entry in sorted(resources.files(__package__).joinpath("profiles").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            p = parse_profile(tomllib.loads(entry.read_text(encoding="utf-8")), f"profiles/{entry.name}")
            out[p.name] = p
    return out


def pick(command: list[str]) -> Profile | None:
    """The shipped profile whose ``match`` words occur in the command line (the longest match wins)."""
    words = " ".join(command).lower()
    found = [(len(m), p) for p in shipped().values() for m in p.match if m.lower() in words]
    return max(found, key=lambda x: x[0])[1] if found else None


def for_api(api: str) -> Profile:
    """The shipped profile that stands for an API (``--provider``): the first of that API, by name."""
    api = ALIASES.get(api, api)
    return next(p for p in shipped().values() if p.api == api)


def resolve(name_or_file: str) -> Profile:
    """``--profile``: a shipped profile's name, or a TOML file."""
    profiles = shipped()
    if name_or_file in profiles:
        return profiles[name_or_file]
    if Path(name_or_file).is_file():
        return load_profile(name_or_file)
    raise ProfileError(f"--profile {name_or_file}: no such file, and no shipped profile of that name "
                       f"(shipped: {', '.join(profiles)})")
