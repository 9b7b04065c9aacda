"""Build the sdist and wheel once per session (`python -m build`: the wheel is built from the
sdist, as an installer would) and install the wheel, not editable, into a fresh virtual
environment that shares nothing with the project's .venv."""

from __future__ import annotations

import subprocess
import sys

import pytest

from package.support import Dist, Installed, clean_copy, widget_requirements


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> Dist:
    out = tmp_path_factory.mktemp("dist")
    source = clean_copy(tmp_path_factory.mktemp("source"))
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(source)], capture_output=True, text=True, timeout=600
    )
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
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-compile",
            f"{dist.wheel}[server]",
            *widget_requirements(dist.wheel),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"installing the wheel failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return Installed(venv, outside)
