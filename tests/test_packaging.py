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

import pytest

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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built offline: no build isolation (which would fetch setuptools from
    the registry), with the setuptools the test extra installs (>= 70.1: bdist_wheel built in)."""
    out = tmp_path_factory.mktemp("wheel")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index", "--no-build-isolation",
                           "--no-cache-dir", "-w", str(out), str(ROOT)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = out.glob("*.whl")
    return path


def test_the_wheel_holds_only_acp_lifecycle_at_the_top(wheel):
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"acp_lifecycle"}


def test_installing_into_a_fresh_venv_puts_no_model_or_sims_on_sys_path(wheel, tmp_path):
    """`pip install` of the wheel `pip install .` builds, into a fresh venv (no dependencies: find_spec only looks)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONPATH": ""}
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True, env=env).stdout.strip()
    before = {p.name for p in Path(site).iterdir()}
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-cache-dir", str(wheel)],
                   check=True, capture_output=True, env=env)
    code = (
        "import importlib.util as u, sys;"
        "print(sorted(n for n in ('model', 'sims', 'acp_lifecycle', 'acp_lifecycle.sims.cli') if u.find_spec(n)))"
    )
    out = subprocess.run([str(python), "-c", code], cwd=tmp_path, check=True, capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "['acp_lifecycle', 'acp_lifecycle.sims.cli']"
    added = {p.name for p in Path(site).iterdir()} - before
    assert {n for n in added if not n.endswith(".dist-info")} == {"acp_lifecycle"}
