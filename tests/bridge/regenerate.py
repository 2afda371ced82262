"""Write the live bridge runs into tests/bridge/fixtures/ (see live.py).

    npm ci --prefix tests/bridge/gen && pip install agent-client-protocol==0.12.1
    python tests/bridge/regenerate.py            # every run
    python tests/bridge/regenerate.py ts-v1-agent
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import live  # noqa: E402


def main(names: list[str]) -> int:
    live.FIXTURES.mkdir(exist_ok=True)
    for name in names or list(live.RUNS):
        why = live.missing(name)
        if why:
            print(f"{name}: cannot run: {why}", file=sys.stderr)
            return 2
        record, log = live.run(name, live.FIXTURES)
        print(f"{name}: {record.relative_to(Path.cwd()) if record.is_relative_to(Path.cwd()) else record}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
