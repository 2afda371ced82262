"""The screenshots of docs/explore.md, taken with headless Chromium (``explore --screenshots DIR``).

Chromium is the system's (Debian: ``apt-get install chromium``); nothing is
downloaded. The explorer runs in this process on a free port of 127.0.0.1 for
as long as the screenshots take.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from .model_access import model_for
from .server import Explorer

__all__ = ["SHOTS", "chromium", "screenshots"]

#: file name -> (what it shows, config, member, rules, bug, path or the property whose check trace to open)
SHOTS = {
    "explore-tiny.png": ("tiny: a prompt submitted, received, inserted and echoed by a chunk; the response is next",
                         "tiny", "", "rfd", "", [0, 0, 1, 2, 0]),
    "explore-bug.png": ("the seeded bug answer-at-receipt: its counterexample, opened from check's link",
                        "tiny", "", "rfd", "answer-at-receipt", "success_only_after_insertion"),
    "explore-permission.png": ("member permission under rfd+2.4.0: the user cancels work blocked on a permission "
                               "request; the agent cancels the request", "default", "permission", "rfd+2.4.0", "",
                               [0, 0, 1, 0, 0, 0, 0, 2, 0, 0]),
}


def chromium() -> str | None:
    """The system's Chromium, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _path(config, member, rules, bug, what) -> tuple[str, list[int]]:
    model = model_for(config, member, rules, bug)
    if isinstance(what, str):
        what = next(t["path"] for t in model.check_traces() if t["property"] == what)
    model.walk(what)
    return model.query(what), what


def screenshots(out: str | Path, width: int = 1400, height: int = 1450) -> list[str]:
    """Write every screenshot of ``SHOTS`` into ``out``; one line of report per file."""
    browser = chromium()
    if browser is None:
        raise RuntimeError("no chromium on PATH (Debian: apt-get install chromium)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    server = Explorer(0).start()
    report = []
    try:
        with tempfile.TemporaryDirectory() as profile:
            for name, (what, config, member, rules, bug, path) in SHOTS.items():
                query, _ = _path(config, member, rules, bug, path)
                target = out / name
                subprocess.run(
                    [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     f"--user-data-dir={profile}", f"--window-size={width},{height}", "--virtual-time-budget=5000",
                     f"--screenshot={target}", server.url + "?" + query],
                    check=True, capture_output=True, timeout=120)
                report.append(f"{target}: {what} ({server.url}?{query})")
    finally:
        server.shutdown()
        server.server_close()
    return report
