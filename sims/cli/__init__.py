"""The ``acp-lifecycle`` command.

One module per group of subcommands; each has ``register(sub)``, which adds
its parsers and sets ``run`` to the function that carries the command out.
A command line that names its subcommand first loads only that module (what
the others import, numpy and the searches among it, is a third of a second
of a short ``trace``'s start); ``--help`` and anything else load them all.

Exit status: 0 when every verdict matches its expectation, 1 when one does not,
2 for bad usage (a one-line error, never a traceback). The spec variants
(``model/variants/*.toml``) are read before any command runs: a malformed file
is that one line for every command.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from acp_lifecycle.model.config import ConfigError
from acp_lifecycle.model.variants import VariantError
from acp_lifecycle.model.proposals import ProposalError
from acp_lifecycle.model.proposals import registry as _read_proposals
from acp_lifecycle.model.variants import variants as _read_variants  # not `variants`: the submodule of that name
from acp_lifecycle.sims.errors import TooLarge

from .common import Parser, UsageError

__all__ = ["main", "UsageError", "subcommands"]

#: The modules of subcommands, in the order ``--help`` lists them.
_MODULES = ("check", "fuzz", "listings", "variants", "diff", "find", "review", "mutate", "scenario", "generate", "trace",
            "record", "bridge", "probe", "schema", "explore", "agent")

#: The module that registers each subcommand (tests/test_cli.py checks it against what they register).
COMMANDS = {"check": "check", "fuzz": "fuzz", "bugs": "listings", "configs": "listings", "variants": "variants",
            "regress": "variants", "diff": "diff", "find": "find", "review": "review", "mutate": "mutate",
            "scenario": "scenario", "diagrams": "generate", "docs": "generate", "trace": "trace", "record": "record",
            "bridge": "bridge", "provider": "probe", "probe": "probe", "schema": "schema", "explore": "explore",
            "agent": "agent"}


def _module(name: str):
    return importlib.import_module(f"{__name__}.{name}")


class _Version(argparse.Action):
    """``--version``, reading the version only when asked (importlib.metadata is slow to load)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default,
                         help=help or "show program's version number and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from acp_lifecycle import __version__

        parser._print_message(f"acp-lifecycle {__version__}\n", sys.stdout)
        parser.exit()


def _parser(command: str | None = None) -> Parser:
    """The parser of every subcommand, or (``command``) of the one module that registers it."""
    p = Parser(prog="acp-lifecycle", description="Model checker for the ACP v2 prompt lifecycle.")
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in (COMMANDS[command],) if command in COMMANDS else _MODULES:
        _module(name).register(sub)
    return p


def subcommands(parser: Parser | None = None) -> dict[str, Parser]:
    """Every subcommand's parser by name (the tests drive each of them)."""
    parser = parser or _parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _error(message) -> int:
    text = " ".join(str(message).split()) or "error"
    print(f"acp-lifecycle: error: {text}", file=sys.stderr)
    return 2


def _parse(parser: Parser, argv: list[str]):
    """Parse ``argv``; for a subcommand that runs a program (``record OUT -- AGENT ARGS``),
    everything after the first ``--`` is that program's command line, untouched."""
    if "--" in argv:
        cut = argv.index("--")
        try:
            args = parser.parse_args(argv[:cut])
        except UsageError:
            args = None
        if args is not None and getattr(args, "takes_program", False):
            args.program = argv[cut + 1 :]
            return args
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    program, command = argv is None, None  # run as the program (its arguments from sys.argv), not called
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        parser = _parser(argv[0] if argv else None)
        args = _parse(parser, argv)
        if getattr(args, "run", None) is None:
            parser.print_help()
            return 2
        args._parser = subcommands(parser)[args.command]
        command = args.command
        _read_proposals()  # every command refuses a proposal whose module does not load (one line)
        _read_variants()  # every command refuses a malformed variant file, not only those that read one
        if program:
            from acp_lifecycle.sims.search.interrupt import terminate_raises

            terminate_raises()  # SIGTERM: the cleanup of Ctrl-C (a search's workers ended), then exit 143
        return args.run(args)
    except (UsageError, ConfigError, TooLarge, VariantError, ProposalError) as e:
        return _error(e)
    except KeyError as e:
        return _error(e.args[0] if e.args else e)
    except BrokenPipeError:  # `acp-lifecycle check | head`: the reader has gone, not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:  # pragma: no cover
            pass
        return 0
    except OSError as e:  # a file the checks before the work could not foresee (disk full, a race)
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        return _error(f"{where}{e.strerror or e}")
    except KeyboardInterrupt as e:
        terminated = type(e).__name__ == "Terminated"
        print(f"acp-lifecycle: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        if program and (command == "check" or terminated):
            # A search interrupted late holds hundreds of MB of states and memos: freeing them took
            # 1.3 to 1.9 s (wide-lost-response at 20 and 30 s). It writes no file; end at once.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(143 if terminated else 130)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
