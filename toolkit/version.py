"""The package's version, read from one place: the distribution's metadata (pyproject.toml's
``version``, recorded at install time)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

DISTRIBUTION = "collab-workflows"
UNKNOWN = "0+unknown"
_CHECKOUT_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def distribution_version(name: str = DISTRIBUTION, pyproject: Path = _CHECKOUT_PYPROJECT) -> str:
    """The installed distribution's version; when it is not installed (the package imported
    straight from a checkout), the ``version`` of the checkout's ``pyproject.toml`` if that
    file describes ``name``; else ``0+unknown`` (a valid version that sorts before any release)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        pass
    import tomllib  # only on this rare path: a checkout without an install

    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return UNKNOWN
    if project.get("name") != name or not isinstance(project.get("version"), str):
        return UNKNOWN
    return project["version"]
