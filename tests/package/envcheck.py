"""Does environment.yml agree with pyproject.toml? One function listing every disagreement.

environment.yml may ask conda only for what pip cannot install (the interpreter, system tools
such as graphviz's `dot`) and must install every Python dependency through pip from the
project itself (``-e .[extra,...]``), so the dependency list lives in pyproject.toml alone.
"""

from __future__ import annotations

import re

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

# conda-forge packages whose name is also a PyPI name of ours but which are the system tool,
# not the Python package (conda-forge calls the Python binding `python-graphviz`).
CONDA_SYSTEM_TOOLS = {"graphviz": "the `dot` binary"}

_PROJECT_LINE = re.compile(r"^(?:-e\s+)?\.(?:\[(?P<extras>[A-Za-z0-9_,\s-]*)\])?$")
_CONDA_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)\s*(?P<spec>.*)$")


def project_dependency_names(project: dict) -> set[str]:
    """Canonical names of every dependency of the project, required or in any extra (not itself)."""
    lines = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        lines.extend(extra)
    own = canonicalize_name(project["name"])
    return {n for n in (canonicalize_name(Requirement(line).name) for line in lines) if n != own}


def lowest_python(spec: str) -> Version | None:
    """The lowest interpreter version a conda match spec for ``python`` admits (None: no lower bound).

    ``=3.11`` (conda's fuzzy form, 3.11.*), ``==3.11.7``, ``>=3.11`` and comma-joined bounds."""
    spec = spec.strip()
    if spec.startswith("=") and not spec.startswith("=="):
        return Version(spec[1:].rstrip(".*"))
    lows = [Version(s.version.rstrip(".*")) for s in SpecifierSet(spec) if s.operator in (">=", "==", "~=", "===")]
    lows += [Version(s.version) for s in SpecifierSet(spec) if s.operator == ">"]
    return max(lows) if lows else None


def disagreements(env: dict, pyproject: dict) -> list[str]:
    """Every way ``env`` (environment.yml, parsed) disagrees with ``pyproject`` (parsed); [] if none."""
    project = pyproject["project"]
    extras_defined = set(project.get("optional-dependencies", {}))
    ours = project_dependency_names(project)
    problems: list[str] = []
    conda: list[str] = []
    pip_lines: list[str] = []
    for item in env.get("dependencies", []):
        if isinstance(item, dict) and "pip" in item:
            pip_lines.extend(str(line).strip() for line in item["pip"])
        else:
            conda.append(str(item).strip())

    pythons = [m for m in (_CONDA_SPEC.match(c) for c in conda) if m and m["name"] == "python"]
    if not pythons:
        problems.append("environment.yml: no `python` among the conda dependencies")
    for m in pythons:
        low = lowest_python(m["spec"])
        needed = SpecifierSet(project.get("requires-python", ""))
        if low is None or low not in needed:
            problems.append(
                f"environment.yml: {m.group(0)!r} admits versions below requires-python {needed} of pyproject.toml"
            )

    for c in conda:
        m = _CONDA_SPEC.match(c)
        name = canonicalize_name(m["name"]) if m else c
        as_pypi = name.removeprefix("python-")
        if name in CONDA_SYSTEM_TOOLS or name in ("python", "pip"):
            continue
        if name in ours or as_pypi in ours:
            problems.append(
                f"environment.yml: conda dependency {c!r} repeats a Python dependency of "
                "pyproject.toml; it comes through pip with the project"
            )

    project_lines = [line for line in pip_lines if _PROJECT_LINE.match(line)]
    if len(project_lines) != 1:
        problems.append(
            f"environment.yml: the pip section must install the project exactly once "
            f"(`-e .[extra,...]`); found {project_lines or 'no such line'}"
        )
    for line in project_lines:
        extras = _PROJECT_LINE.match(line)["extras"] or ""
        for extra in filter(None, (e.strip() for e in extras.split(","))):
            if extra not in extras_defined:
                problems.append(
                    f"environment.yml: extra {extra!r} is not in pyproject.toml's "
                    f"optional-dependencies ({', '.join(sorted(extras_defined))})"
                )
    for line in pip_lines:
        if line in project_lines:
            continue
        try:
            name = canonicalize_name(Requirement(line).name)
        except ValueError:
            name = None
        if name in ours:
            problems.append(f"environment.yml: pip line {line!r} repeats a dependency of pyproject.toml by hand")
        else:
            problems.append(
                f"environment.yml: pip line {line!r} is not the project: add it to an extra of pyproject.toml instead"
            )
    return problems
