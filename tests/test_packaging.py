"""The installed package: one import name of the project's own, every folder listed.

``pip install acp-lifecycle`` must put nothing generic (``model``, ``sims``) on
``sys.path``: the folders ``model/`` and ``sims/`` are mapped to
``acp_lifecycle.model`` and ``acp_lifecycle.sims`` by ``pyproject.toml``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _declared() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(data["tool"]["setuptools"]["packages"])


def _folders() -> set[str]:
    found = {"acp_lifecycle"}
    for top, name in (("model", "acp_lifecycle.model"), ("sims", "acp_lifecycle.sims")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            found.add(".".join([name, *rel.parts]) if rel.parts else name)
    return found


def test_every_package_folder_is_declared_in_pyproject():
    assert _declared() == _folders()


def test_no_module_imports_the_folders_by_their_bare_names():
    offenders = []
    for top in ("model", "sims", "tests", "bench"):
        for path in (ROOT / top).rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                stripped = line.strip()
                if stripped.startswith(("from model", "import model", "from sims", "import sims")):
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {stripped}")
    assert not offenders, offenders


def test_the_installed_package_is_found_outside_the_checkout(tmp_path):
    code = (
        "import importlib.util as u, acp_lifecycle.model, acp_lifecycle.sims.cli;"
        "print(u.find_spec('model') is None and u.find_spec('sims') is None)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_the_wheel_holds_only_acp_lifecycle_at_the_top(tmp_path):
    """Builds the wheel (build isolation fetches setuptools from the package registry)."""
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                   check=True, env=env, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"acp_lifecycle"}
