"""Every ``>>>`` example in ``toolkit/`` runs: the examples are documentation, and
documentation that is executed cannot drift from the code. One test per module that has
examples, so a failure names the module."""

from __future__ import annotations

import doctest
import importlib
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


@pytest.mark.parametrize("name", [n for n in modules_with_examples() if n not in EXCLUDED])
def test_examples_run(name):
    module = importlib.import_module(name)
    tests = [t for t in doctest.DocTestFinder().find(module, name) if t.examples]
    assert tests, f"{name}: the source has '>>>' but no docstring example was found (a typo in a prompt?)"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (output above)"


def test_exclusions_are_still_needed():
    """An excluded module that lost its examples, or was removed, leaves the list."""
    assert set(EXCLUDED) <= set(modules_with_examples())
