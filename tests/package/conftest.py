"""Build the sdist and wheel once per test run (`python -m build`: the wheel is built from the
sdist, as an installer would) and install the wheel, not editable, into a fresh virtual
environment that shares nothing with the project's .venv.

Both are made once for the whole run, not once per pytest worker: the build (a mypyc compile)
and the install take a minute and more, and the packaging tests may run in different workers
(:func:`package.support.made_once`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from package.support import Dist, Installed, clean_copy, made_once, widget_requirements


def _build(out: Path) -> None:
    source = clean_copy(out / "source")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(source)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"python -m build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> Dist:
    out = made_once(tmp_path_factory, "dist", _build)
    (sdist,), (wheel,) = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    return Dist(sdist, wheel)


@pytest.fixture(scope="session")
def installed(dist, tmp_path_factory) -> Installed:
    venv = made_once(tmp_path_factory, "installed-venv", lambda folder: _install(dist, folder))
    # The venv is shared; each worker runs its commands in a folder of its own.
    return Installed(venv, tmp_path_factory.mktemp("elsewhere"))


def _install(dist: Dist, venv: Path) -> None:
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
