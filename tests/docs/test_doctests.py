"""Every ``>>>`` example in ``toolkit/`` runs: the examples are documentation, and
documentation that is executed cannot drift from the code. One test per module that has
examples, so a failure names the module."""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.machinery
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Modules whose examples are not run here, each with the reason. Keep this list short: an
# example that needs something heavy can usually be given a small stand-in instead.
EXCLUDED: dict[str, str] = {}

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def modules_with_examples(root: Path = ROOT) -> list[str]:
    """Dotted names of the toolkit modules whose source holds a ``>>>`` example."""
    names = []
    for path in sorted((root / "toolkit").rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def compiled(module) -> bool:
    """Whether the module was imported from a C extension (mypyc, setup.py) instead of its source."""
    return module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def examples_of(module, name: str) -> list[doctest.DocTest]:
    """The module's docstring examples. A compiled module's functions are not Python functions,
    so doctest's finder sees none: their docstrings are read from the source instead, and run
    against the compiled module's names."""
    if not compiled(module):
        return [t for t in doctest.DocTestFinder().find(module, name) if t.examples]
    source = Path(module.__file__).with_name(name.rsplit(".", 1)[-1] + ".py")
    parser, found = doctest.DocTestParser(), []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc and ">>>" in doc:
                label = f"{name}.{getattr(node, 'name', '')}".rstrip(".")
                test = parser.get_doctest(doc, dict(vars(module)), label, str(source), getattr(node, "lineno", 0))
                found.append(test)
    return found


@pytest.mark.parametrize("name", [n for n in modules_with_examples() if n not in EXCLUDED])
def test_examples_run(name):
    module = importlib.import_module(name)
    tests = examples_of(module, name)
    assert tests, f"{name}: the source has '>>>' but no docstring example was found (a typo in a prompt?)"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (output above)"


def test_exclusions_are_still_needed():
    """An excluded module that lost its examples, or was removed, leaves the list."""
    assert set(EXCLUDED) <= set(modules_with_examples())
