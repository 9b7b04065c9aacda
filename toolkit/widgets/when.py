"""The Designer's predicate builder: one comparison ``<var path> <op> <value>`` as a ``when``.

A custom edge's ``when`` is a JSON-AST string (see :mod:`toolkit.predicates`). Most
routing needs one comparison, which :func:`build_when` writes and :func:`split_when` reads
back (``None`` for anything richer, which the Designer then shows as raw JSON to edit).

>>> when = build_when("output.score", "lt", "0.8")
>>> when
'{"op": "lt", "args": [{"var": "output.score"}, 0.8]}'
>>> split_when(when)
{'path': 'output.score', 'op': 'lt', 'value': '0.8', 'negate': False}
>>> build_when("execution.input.channel", "eq", "web", negate=True)
'{"op": "not", "args": [{"op": "eq", "args": [{"var": "execution.input.channel"}, "web"]}]}'
>>> build_when("output.reason", "exists")
'{"op": "exists", "args": [{"var": "output.reason"}]}'
"""

from __future__ import annotations

import json

from toolkit.predicates import PredicateError, parse

__all__ = ["BINARY_OPS", "UNARY_OPS", "OPS", "build_when", "split_when", "parse_value", "format_value", "check"]

BINARY_OPS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "includes", "startsWith", "endsWith", "regex")
UNARY_OPS = ("exists", "isEmpty")
OPS = BINARY_OPS + UNARY_OPS
PATH_EXAMPLES = ("output.decision", "output.score", "step.status", "execution.input.amount")


def parse_value(text: str):
    """The comparison value typed in the builder: JSON when it parses (``0.8``, ``true``,
    ``["a", "b"]``, ``"10"``), else the text itself as a string."""
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        return text


def format_value(value) -> str:
    """The inverse of :func:`parse_value`: strings bare unless they would read as JSON."""
    if isinstance(value, str) and parse_value(value) == value:
        return value
    return json.dumps(value)


def build_when(path: str, op: str, value: str = "", negate: bool = False) -> str:
    """The ``when`` string comparing ``{"var": path}`` with ``value`` (text, see
    :func:`parse_value`) by ``op``; ``negate`` wraps it in ``not``."""
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}, not {op!r}")
    args = [{"var": path.strip()}] + ([] if op in UNARY_OPS else [parse_value(value)])
    ast = {"op": op, "args": args}
    if negate:
        ast = {"op": "not", "args": [ast]}
    return json.dumps(ast, ensure_ascii=False)


def split_when(when: str | None) -> dict | None:
    """``{path, op, value, negate}`` when ``when`` is one (possibly negated) comparison of a
    variable with a literal; ``None`` otherwise."""
    try:
        ast = json.loads(when) if when else None
    except ValueError:
        return None
    negate = False
    if isinstance(ast, dict) and ast.get("op") == "not" and isinstance(ast.get("args"), list) and len(ast["args"]) == 1:
        ast, negate = ast["args"][0], True
    if not (isinstance(ast, dict) and ast.get("op") in OPS and isinstance(ast.get("args"), list)):
        return None
    args = ast["args"]
    unary = ast["op"] in UNARY_OPS
    if len(args) != (1 if unary else 2) or not (isinstance(args[0], dict) and set(args[0]) == {"var"}):
        return None
    if not unary and isinstance(args[1], dict):
        return None
    return {"path": args[0]["var"], "op": ast["op"], "value": "" if unary else format_value(args[1]), "negate": negate}


def check(when: str) -> str | None:
    """The predicate parser's complaint about ``when``, or ``None`` when it is valid."""
    try:
        parse(when)
    except PredicateError as exc:
        return str(exc)
    return None
