"""What a diff observes, and the bounds of a member in one line (the CLI and ``review`` print them)."""

from __future__ import annotations

from dataclasses import fields

from acp_lifecycle.model.config import Config

__all__ = ["OBSERVED", "bounds", "bounds_text"]

#: What the diff observes, in one sentence (printed with the bounds, and in --json).
OBSERVED = (
    "every JSON-RPC message on each connection, in the order sent; connection closures; "
    "the end of a run; ids up to consistent renaming"
)


def bounds(cfg: Config) -> dict:
    """The budgets of a member that differ from a one-client, one-prompt configuration."""
    base = Config()
    out = {f.name: getattr(cfg, f.name) for f in fields(cfg)
           if f.name not in ("name", "extra") and getattr(cfg, f.name) != getattr(base, f.name)}
    out.update(dict(cfg.extra))  # the bounds proposals add, by name
    return out


def bounds_text(cfg: Config) -> str:
    b = bounds(cfg)
    return " ".join(f"{k}={','.join(v) if isinstance(v, tuple) else v}" for k, v in b.items()) or "(the defaults)"
