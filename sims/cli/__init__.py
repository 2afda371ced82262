"""The ``acp-lifecycle`` command.

One module per group of subcommands; each has ``register(sub)``, which adds
its parsers and sets ``run`` to the function that carries the command out.

Exit status: 0 when every verdict matches its expectation, 1 when one does not,
2 for bad usage (a one-line error, never a traceback).
"""

from __future__ import annotations

import sys

from acp_lifecycle.model.config import ConfigError
from acp_lifecycle.sims.search.explore import TooLarge

from . import bridge, check, fuzz, generate, listings, scenario, schema, trace, variants
from .common import Parser, UsageError

__all__ = ["main", "UsageError"]

#: In the order ``--help`` lists them.
_MODULES = (check, fuzz, listings, variants, scenario, generate, trace, bridge, schema)


def _parser() -> Parser:
    p = Parser(prog="acp-lifecycle", description="Model checker for the ACP v2 prompt lifecycle.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for module in _MODULES:
        module.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if getattr(args, "run", None) is None:
            _parser().print_help()
            return 2
        return args.run(args)
    except (UsageError, ConfigError, TooLarge) as e:
        print(f"acp-lifecycle: error: {e}", file=sys.stderr)
        return 2
    except KeyError as e:
        print(f"acp-lifecycle: error: {e.args[0]}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("acp-lifecycle: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
