"""Build the sdist and wheel once per session (`python -m build`: the wheel is built from the
sdist, as an installer would) and install the wheel, not editable, into a fresh virtual
environment that shares nothing with the project's .venv."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Dist:
    sdist: Path
    wheel: Path


@dataclass
class Installed:
    """A fresh venv with the wheel installed; commands run in ``outside``, a folder outside the checkout."""

    venv: Path
    outside: Path

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def collab(self) -> str:
        return str(self.venv / "bin" / "collab")

    def env(self) -> dict[str, str]:
        """The test's environment without anything pointing at the checkout or the project's venv."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.venv)
        return env

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), cwd=self.outside, env=self.env(), capture_output=True, text=True,
                              timeout=timeout)


def widget_requirements(wheel: Path) -> list[str]:
    """The `notebook` extra's requirements minus the JupyterLab application: the libraries the
    widgets import (ipywidgets, anywidget…) without the editor nobody imports, which is most of
    the extra's install time."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(name).decode()
    out = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist: "):
            continue
        req = Requirement(line.removeprefix("Requires-Dist: "))
        if req.marker is not None and req.marker.evaluate({"extra": "notebook"}) and \
                not req.marker.evaluate({"extra": ""}) and req.name.lower() != "jupyterlab":
            req.marker = None
            out.append(str(req))
    assert out, "the wheel's notebook extra lists no widget library"
    return out


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> Dist:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"python -m build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    (sdist,), (wheel,) = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    return Dist(sdist, wheel)


@pytest.fixture(scope="session")
def installed(dist, tmp_path_factory) -> Installed:
    root = tmp_path_factory.mktemp("installed")
    venv, outside = root / "venv", root / "elsewhere"
    outside.mkdir()
    # A real venv (no system site-packages) made from the base interpreter; the project venv's pip
    # installs into it (`pip --python`), from pip's cache, without byte-compiling (not needed here).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
         "--no-compile", f"{dist.wheel}[server]", *widget_requirements(dist.wheel)],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"installing the wheel failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return Installed(venv, outside)
