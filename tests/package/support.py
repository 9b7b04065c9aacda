"""Helpers for the packaging tests: a clean copy of the checkout, the built artefacts, a venv
with the wheel installed."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import zipfile
from collections.abc import Callable
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
        return subprocess.run(
            list(args), cwd=self.outside, env=self.env(), capture_output=True, text=True, timeout=timeout
        )


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name``, filled by ``make(folder)`` once for the whole test run: under
    pytest-xdist the first worker to ask makes it while the others wait (a lock file), then
    every worker uses it. The workers' temporary folders share a parent for the run, which is
    where it is made. A ``make`` that fails does not mark the folder made, so the next worker
    starts it again from an empty folder (and fails the same way)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    with open(folder.with_name(f"{name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        done = folder / ".made"
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


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
        if (
            req.marker is not None
            and req.marker.evaluate({"extra": "notebook"})
            and not req.marker.evaluate({"extra": ""})
            and req.name.lower() != "jupyterlab"
        ):
            req.marker = None
            out.append(str(req))
    assert out, "the wheel's notebook extra lists no widget library"
    return out


def checkout_files() -> list[str]:
    """The files git tracks or would track (new ones included, ignored ones not), relative to ROOT."""
    proc = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [f for f in proc.stdout.split("\0") if f and (ROOT / f).is_file()]


def clean_copy(dest: Path) -> Path:
    """The checkout as a fresh clone would have it. A working tree holds build leftovers (an
    editable install's collab_workflows.egg-info, whose SOURCES.txt setuptools adds to every
    sdist) that would put files in the wheel which package-data forgot."""
    for name in checkout_files():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return dest
