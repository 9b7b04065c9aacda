"""Every exception class defined in toolkit/ and server/ is named in toolkit/errors.py's tree."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import toolkit.errors

ROOT = Path(__file__).resolve().parents[2]


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def exception_classes(root: Path = ROOT, folders: tuple[str, ...] = ("toolkit", "server")) -> dict[str, str]:
    """Name -> defining file of every class that derives (through any chain of project classes
    or builtins) from BaseException."""
    classes: dict[str, tuple[str, list[str]]] = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    classes[node.name] = (str(path.relative_to(root)), [_base_name(b) for b in node.bases])
    found: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, (where, bases) in classes.items():
            if name in found:
                continue
            builtin = [getattr(builtins, b, None) for b in bases]
            if any(b in found for b in bases) or any(
                isinstance(b, type) and issubclass(b, BaseException) for b in builtin
            ):
                found[name] = where
                changed = True
    return found


def test_the_scan_sees_the_known_exceptions():
    found = exception_classes()
    for name in (
        "ApiError",
        "PredicateError",
        "UserTokenError",
        "ReplayError",
        "MirrorError",
        "ConcurrentChange",
        "AgentFailure",
        "UnsupportedPattern",
        "BodyTooLarge",
        "Refused",
        "BadUrl",
    ):
        assert name in found


def test_every_exception_class_is_in_the_error_tree():
    tree = toolkit.errors.__doc__
    missing = {name: where for name, where in exception_classes().items() if f" {name} " not in tree}
    assert not missing, f"add these to the tree in toolkit/errors.py's docstring: {missing}"


def test_a_subclass_of_a_project_exception_counts(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        "class Quota(Base):\n    pass\nclass Base(LookupError):\n    pass\nclass Plain:\n    pass\n"
    )
    assert exception_classes(tmp_path, ("pkg",)) == {"Quota": "pkg/m.py", "Base": "pkg/m.py"}
