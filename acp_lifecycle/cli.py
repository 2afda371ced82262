"""The ``acp-lifecycle`` console script.

It loads the command (``acp_lifecycle.sims.cli``, a quarter of a second of
imports) inside the same Ctrl-C handling as the command itself: an interrupt
while it is still loading is one line and exit status 130 too, not a traceback.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    try:
        from acp_lifecycle.sims.cli import main as run
    except KeyboardInterrupt:
        print("acp-lifecycle: interrupted", file=sys.stderr)
        return 130
    return run(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
