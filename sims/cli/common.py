"""What every subcommand shares: the one-line usage error, consoles, progress bars."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

__all__ = ["UsageError", "Parser", "console", "variant_names", "variant_progress", "validator"]


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse prints usage too)
        raise UsageError(message)


def console() -> Console:
    # A pipe gets 80 columns from rich; the tables need more to stay unwrapped.
    probe = Console()
    return Console(highlight=False, soft_wrap=True, width=None if probe.is_terminal else 140)


def variant_names(args) -> list[str] | None:
    from acp_lifecycle.model.variants import get_variant

    return [get_variant(n).name for n in args.variant] if args.variant else None


def variant_progress(err: Console, names: list[str]):
    """A progress bar over variants on stderr (only on a terminal)."""
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(), console=err,
                   transient=True, disable=not err.is_terminal)
    task = bar.add_task("variants", total=len(names))

    def on_variant(name):
        # called as each variant starts: the ones before it are done
        bar.update(task, description=f"variant {name}", completed=names.index(name))

    return bar, on_variant



def validator(args):
    """The schema validator for --schema/the pulled copy, or None with --no-schema."""
    if getattr(args, "no_schema", False):
        return None
    from acp_lifecycle.sims.wire.schema import SchemaError, Validator, locate

    try:
        return Validator(locate(args.schema))
    except SchemaError as e:
        raise UsageError(str(e)) from None

