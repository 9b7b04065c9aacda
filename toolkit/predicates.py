"""Edge predicates: the `when` language of workflow edges with ``on: "custom"``.

A ``when`` is a JSON string (at most 1000 chars) holding one expression::

    expr    := literal | var | call
    literal := null | true | false | number | string | [expr, ...]
    var     := {"var": path}
    call    := {"op": name, "args": [expr, ...]}
    path    := root ("." segment)*        root := output | step | execution.input

``output`` is the source step's output, ``step`` holds ``stepId nodeId nodeType
status iteration`` and ``execution.input`` the dispatch triggerContext. An absent
path evaluates to null. A segment that is a non-negative integer indexes an
array when the current value is an array; otherwise it is an object key.

Ops: ``eq ne`` (deep JSON equality, 1 == 1.0, true != 1), ``gt gte lt lte``
(two numbers or two strings, else false), ``and or`` (>= 1 arg, short-circuit
on JSON truthiness), ``not``, ``in`` (value, array), ``includes`` (string or
array, value), ``startsWith endsWith``, ``regex`` (value, string-literal
pattern; searches the first 16384 chars in time linear in them, see
:mod:`toolkit.regex_linear`, which refuses backreferences, lookaround,
possessive and atomic constructs; at most 4 per `when`), ``length`` (a value,
null for non-containers), ``isEmpty`` and ``exists`` (argument must be a
``{var}``). Every op except ``length`` is boolean, and the top level must be a
boolean op. Ops and arrays nest at most 32 levels deep. The limits live in
:mod:`toolkit.limits`.

Parsing validates everything and compiles the tree into closures, so
:meth:`Predicate.evaluate` does no parsing work and never raises for any JSON
context: wrong types simply make comparisons false. Given a
:class:`~toolkit.work.Work`, evaluation charges it for what it does (nodes,
characters a regex scans, values deep equality compares) and raises
:class:`~toolkit.work.WorkLimitExceeded` when the command's budget runs out.
"""

from __future__ import annotations

import json
import math
import operator
import re
import warnings
from collections.abc import Callable
from re import _parser as _sre_parser  # type: ignore[attr-defined]  # typeshed lacks re's private parser
from typing import TYPE_CHECKING, NoReturn

from toolkit.json_values import (
    _BOOL,
    _KIND_BY_TYPE,
    _KIND_NAMES,
    _NULL,
    _NUM,
    _SAME_TYPE_FAST,
    _STR,
    _kind,
    json_equal,
    truthy,
)
from toolkit.limits import (
    MAX_REGEX_PER_PREDICATE,
    PREDICATE_MAX_DEPTH,
    REGEX_INPUT_CAP,
    REGEX_MAX_PATTERN_CHARS,
    REGEX_STEP_UNITS,
    REGEX_TEST_UNITS,
    WHEN_MAX_CHARS,
)
from toolkit.regex_linear import LinearPattern, UnsupportedPattern, compile_linear

if TYPE_CHECKING:
    from toolkit.work import Work

__all__ = ["PredicateError", "Predicate", "parse", "parse_ast", "evaluate", "truthy", "json_equal"]

MAX_WHEN_CHARS = WHEN_MAX_CHARS
MAX_DEPTH = PREDICATE_MAX_DEPTH
MAX_PATTERN_CHARS = REGEX_MAX_PATTERN_CHARS
# The context key under which evaluation finds the command's Work: not a string, so no
# `var` path can reach it.
_WORK = object()

_MISSING = object()  # "path absent": distinct from a present null, which `exists` must tell apart


class PredicateError(ValueError):
    """A `when` that is not a valid predicate; str(err) names the problem and where."""


def _work_of(ctx: object) -> Work | None:
    """The Work an evaluation was given, or None (also for a context that is not an object)."""
    return ctx.get(_WORK) if type(ctx) is dict else None


_INDEX = re.compile(r"0|[1-9][0-9]*")


def _compile_path(path: object, loc: str, missing: object):
    """Return ctx -> the value at `path`, or `missing` when it is absent."""
    if not isinstance(path, str):
        _fail(f"var path must be a string, got {_KIND_NAMES[_kind(path)]}", loc)
    segs = path.split(".")
    if not (segs[0] in ("output", "step") or segs[:2] == ["execution", "input"]):
        _fail(f'bad path root in "{path}" (expected output, step or execution.input)', loc)
    if "" in segs:
        _fail(f'empty segment in path "{path}"', loc)
    # Split and index-parse once here so lookups in the hot loop do no string work.
    indexed = tuple((s, int(s) if _INDEX.fullmatch(s) else None) for s in segs)
    keys = tuple(segs)
    # An absent key yields _MISSING, which is neither dict nor list, so the next step stops.

    def resolve_keys(ctx):
        for key in keys:
            if not isinstance(ctx, dict):
                return missing
            ctx = ctx.get(key, _MISSING)
        return missing if ctx is _MISSING else ctx

    def resolve_indexed(ctx):
        for key, index in indexed:
            if isinstance(ctx, dict):
                ctx = ctx.get(key, _MISSING)
            elif index is not None and isinstance(ctx, list) and index < len(ctx):
                ctx = ctx[index]
            else:
                return missing
        return missing if ctx is _MISSING else ctx

    return resolve_keys if all(i is None for _, i in indexed) else resolve_indexed


_REPEATS = frozenset({_sre_parser.MAX_REPEAT, _sre_parser.MIN_REPEAT, _sre_parser.POSSESSIVE_REPEAT})


def _nests_quantifiers(av: object, in_repeat: bool = False) -> bool:
    # Walk the stdlib's own parse tree rather than scanning the text, so escapes,
    # character classes and (?x) comments cannot fool the check.
    if isinstance(av, (tuple, list)):
        return any(_nests_quantifiers(x, in_repeat) for x in av)
    return isinstance(av, _sre_parser.SubPattern) and any(
        (in_repeat or _nests_quantifiers(arg[2], True)) if op in _REPEATS else _nests_quantifiers(arg, in_repeat)
        for op, arg in av.data
    )


def _compile_regex(pattern: object, loc: str) -> LinearPattern:
    if not isinstance(pattern, str):
        _fail("regex pattern must be a string literal", loc)
    if len(pattern) > MAX_PATTERN_CHARS:
        _fail(f"regex pattern is {len(pattern)} chars, longer than {MAX_PATTERN_CHARS}", loc)
    try:
        # Under "warnings are errors" (pytest) a FutureWarning must not become a rejection.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
            nested = _nests_quantifiers(_sre_parser.parse(pattern))
            linear = None if nested else compile_linear(pattern)
    except UnsupportedPattern as err:
        raise PredicateError(f"regex pattern {pattern!r} is not supported: {err} at {loc}") from None
    except Exception as err:  # re.error, OverflowError, RecursionError
        raise PredicateError(f"regex pattern does not compile ({err}) at {loc}") from None
    if linear is None:
        _fail(f"regex pattern {pattern!r} nests quantifiers (catastrophic backtracking)", loc)
    return linear


def _fail(message: str, loc: str) -> NoReturn:
    raise PredicateError(f"{message} at {loc or 'top level'}")


def _const(value):
    return (lambda ctx: value), value


def _ordered(cmp):
    def build(a, b):
        def fn(ctx):
            x, y = a(ctx), b(ctx)
            kx = _KIND_BY_TYPE.get(type(x)) or _kind(x)  # inline fast path: this is the hot loop
            return (kx == _NUM or kx == _STR) and kx == (_KIND_BY_TYPE.get(type(y)) or _kind(y)) and cmp(x, y)

        return fn

    return build


def _junction(stop: bool):
    """`and` (stop=False) returns at the first falsy argument, `or` (stop=True) at the first truthy."""

    def build(*fs):
        def fn(ctx):
            for f in fs:
                v = f(ctx)
                # Identity tests first: arguments are mostly boolean ops, so truthy() is rarely needed.
                if (v is True or (v is not False and truthy(v))) is stop:
                    return stop
            return not stop

        return fn

    return build


def _member(v, arr, work=None):
    if not isinstance(arr, list):
        return False
    if work is not None:
        work.charge(len(arr))
    return any(json_equal(v, item, work) for item in arr)


def _includes(container, v, work=None):
    if isinstance(container, str):
        return isinstance(v, str) and v in container
    return _member(v, container, work)


def _equal(a, b):
    def fn(ctx):
        x, y = a(ctx), b(ctx)
        if x is y:
            return True
        t = type(x)
        if t is type(y) and t in _SAME_TYPE_FAST:  # scalars: no Work lookup in the hot loop
            return x == y
        return json_equal(x, y, _work_of(ctx))

    return fn


def _affix(method):
    return lambda a, b: lambda ctx: isinstance(s := a(ctx), str) and isinstance(p := b(ctx), str) and method(s, p)


_CONTAINERS = (str, list, dict)
_BUILDERS = {
    "eq": _equal,
    "ne": lambda a, b: (lambda eq: lambda ctx: not eq(ctx))(_equal(a, b)),
    "gt": _ordered(operator.gt),
    "gte": _ordered(operator.ge),
    "lt": _ordered(operator.lt),
    "lte": _ordered(operator.le),
    "and": _junction(False),
    "or": _junction(True),
    "not": lambda a: lambda ctx: not truthy(a(ctx)),
    "in": lambda a, b: lambda ctx: _member(a(ctx), b(ctx), _work_of(ctx)),
    "includes": lambda a, b: lambda ctx: _includes(a(ctx), b(ctx), _work_of(ctx)),
    "startsWith": _affix(str.startswith),
    "endsWith": _affix(str.endswith),
    "length": lambda a: lambda ctx: len(v) if isinstance(v := a(ctx), _CONTAINERS) else None,
    "isEmpty": lambda a: lambda ctx: (v := a(ctx)) is None or (isinstance(v, _CONTAINERS) and not v),
}
_ARITY: dict[str, tuple[int, int | None]] = {
    op: (2, 2) for op in ("eq", "ne", "gt", "gte", "lt", "lte", "in", "includes", "startsWith", "endsWith", "regex")
}
_ARITY.update({"and": (1, None), "or": (1, None), "not": (1, 1), "length": (1, 1), "isEmpty": (1, 1), "exists": (1, 1)})
_BOOLEAN_OPS = frozenset(_ARITY) - {"length"}


class _Found:
    """What compiling one `when` found: its var paths, regex ops and nodes."""

    __slots__ = ("paths", "regex", "nodes")

    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.regex = 0
        self.nodes = 0


def _regex(value, linear: LinearPattern):
    """The `regex` op: linear in the text (toolkit.regex_linear), so no pattern and input can
    stall the caller, and charged to the command's Work per character scanned."""
    search, pattern = linear.search, linear.pattern
    units = REGEX_STEP_UNITS + linear.positions + REGEX_TEST_UNITS * linear.class_tests

    def fn(ctx):
        v = value(ctx)
        if not isinstance(v, str):
            return False
        text = v[:REGEX_INPUT_CAP]
        work = _work_of(ctx)
        return search(text) if work is None else work.search(search, pattern, text, units)

    return fn


def _compile(node: object, loc: str, depth: int, found: _Found):
    """Validate `node`; return (closure over the context, constant value or _MISSING)."""
    found.nodes += 1
    kind = _kind(node)
    if kind in (_NULL, _BOOL, _STR):
        return _const(node)
    if kind == _NUM:
        if isinstance(node, float) and not math.isfinite(node):
            _fail("numbers must be finite (NaN and Infinity are not JSON)", loc)
        return _const(node)
    if isinstance(node, list):  # kind _LIST
        if depth >= MAX_DEPTH:
            _fail(f"expression nested deeper than {MAX_DEPTH} levels", loc)
        parts = [_compile(x, f"{loc}[{i}]", depth + 1, found) for i, x in enumerate(node)]
        if all(c is not _MISSING for _, c in parts):
            return _const([c for _, c in parts])
        fns = tuple(f for f, _ in parts)
        return (lambda ctx: [f(ctx) for f in fns]), _MISSING
    if not isinstance(node, dict):  # kind _OTHER
        _fail(f"{type(node).__name__} is not a JSON value", loc)
    if node.keys() == {"var"}:
        resolve = _compile_path(node["var"], loc, None)  # first: it refuses a non-string (unhashable) path
        found.paths.add(node["var"])
        return resolve, _MISSING
    if node.keys() != {"op", "args"}:
        keys = ", ".join(json.dumps(k) if isinstance(k, str) else repr(k) for k in node)
        _fail(f'object must be {{"var": path}} or {{"op": name, "args": [...]}}, got keys [{keys}]', loc)
    op, args = node["op"], node["args"]
    if not isinstance(op, str):
        _fail(f"op must be a string, got {_KIND_NAMES[_kind(op)]}", loc)
    if op not in _ARITY:
        _fail(f"unknown op {json.dumps(op)}", loc)
    if not isinstance(args, list):
        _fail(f'"args" of op "{op}" must be an array, got {_KIND_NAMES[_kind(args)]}', loc)
    if depth >= MAX_DEPTH:
        _fail(f"expression nested deeper than {MAX_DEPTH} levels", loc)
    low, high = _ARITY[op]
    if len(args) < low or (high is not None and len(args) > high):
        want = f"at least {low} arg" if high is None else f"{low} arg" + "s" * (low != 1)
        _fail(f'op "{op}" takes {want}, got {len(args)}', loc)
    arg_locs = [f"{loc}.args[{i}]" if loc else f"args[{i}]" for i in range(len(args))]
    if op == "exists":
        target = args[0]
        if not (isinstance(target, dict) and target.keys() == {"var"}):
            _fail('op "exists" takes a {"var": path} argument', arg_locs[0])
        resolve = _compile_path(target["var"], arg_locs[0], _MISSING)
        found.paths.add(target["var"])
        return (lambda ctx: resolve(ctx) is not _MISSING), _MISSING
    if op == "regex":
        found.regex += 1
        if found.regex > MAX_REGEX_PER_PREDICATE:
            _fail(f"more than {MAX_REGEX_PER_PREDICATE} regex ops in one predicate", loc)
        linear = _compile_regex(args[1], arg_locs[1])
        parts = [_compile(args[0], arg_locs[0], depth + 1, found)]
        fn = _regex(parts[0][0], linear)
    else:
        parts = [_compile(a, arg_locs[i], depth + 1, found) for i, a in enumerate(args)]
        fn = _BUILDERS[op](*(f for f, _ in parts))
        choices = parts[1][1] if op == "in" else None
        if isinstance(choices, list) and choices and all(type(x) is str for x in choices):
            # The common `value in ["a", "b"]` becomes a set lookup; exact, as only strings equal strings.
            needle, choices = parts[0][0], frozenset(choices)
            fn = lambda ctx: isinstance(v := needle(ctx), str) and v in choices
    if any(c is _MISSING for _, c in parts):
        return fn, _MISSING
    return _const(fn(None))  # ops are pure, so all-constant arguments fold now


class Predicate:
    """A parsed, validated `when`. Immutable; safe to share between threads.

    ``paths`` are the var paths it reads, ``regex_ops`` how many ``regex`` ops it holds and
    ``size`` its number of nodes (what one evaluation is charged at least).

    >>> p = parse('{"op": "gte", "args": [{"var": "output.score"}, 0.5]}')
    >>> p.evaluate({"output": {"score": 0.9}}), sorted(p.paths), p.regex_ops, p.size
    (True, ['output.score'], 0, 3)
    """

    __slots__ = ("ast", "paths", "regex_ops", "size", "_fn")

    # Set once through object.__setattr__ (annotations only, for type checkers).
    ast: object
    paths: frozenset[str]
    regex_ops: int
    size: int
    _fn: Callable[[object], bool]

    def __init__(self, ast: object, found: _Found, fn: Callable[[object], bool]) -> None:
        object.__setattr__(self, "ast", ast)
        object.__setattr__(self, "paths", frozenset(found.paths))
        object.__setattr__(self, "regex_ops", found.regex)
        object.__setattr__(self, "size", found.nodes)
        object.__setattr__(self, "_fn", fn)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("Predicate is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("Predicate is immutable")

    def evaluate(self, context: dict, work: Work | None = None) -> bool:
        """Run against {"output": ..., "step": ..., "execution": {"input": ...}}.

        With ``work`` (a :class:`~toolkit.work.Work`), charge it for this evaluation; raises
        :class:`~toolkit.work.WorkLimitExceeded` when that passes its limit. The context then
        keeps the work under a private key no path can read (not copied: the engine builds a
        context per routed step, and evaluates it once per edge).
        """
        if work is None:
            return self._fn(context)
        work.charge(self.size)
        if type(context) is dict:
            context[_WORK] = work
        return self._fn(context)

    def __reduce__(self):  # closures do not pickle; re-parsing the AST does
        return parse_ast, (self.ast,)

    def __repr__(self) -> str:
        return f"Predicate({json.dumps(self.ast)})"


def _reject_constant(name: str) -> NoReturn:
    raise PredicateError(f"{name} is not valid JSON")


def parse(when: str) -> Predicate:
    """Parse and validate a `when` JSON string.

    >>> parse('{"op": "eq", "args": [{"var": "step.status"}, "done"]}').evaluate({"step": {"status": "done"}})
    True
    """
    if not isinstance(when, str):
        raise PredicateError(f"when must be a JSON string, got {type(when).__name__}")
    if len(when) > MAX_WHEN_CHARS:
        raise PredicateError(f"when is {len(when)} chars, longer than the {MAX_WHEN_CHARS}-char limit")
    try:
        ast = json.loads(when, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as err:
        raise PredicateError(f"when is not valid JSON: {err}") from None
    return parse_ast(ast)


def parse_ast(ast: object) -> Predicate:
    """Validate an already-decoded `when` (kept as `.ast`, so do not mutate it afterwards).

    >>> parse_ast({"op": "exists", "args": [{"var": "execution.input.ticket"}]}).paths
    frozenset({'execution.input.ticket'})
    """
    found = _Found()
    fn, _ = _compile(ast, "", 0, found)
    if not (isinstance(ast, dict) and ast.get("op") in _BOOLEAN_OPS):
        what = (
            f'op "{ast["op"]}"'
            if isinstance(ast, dict) and "op" in ast
            else "a {var} expression"
            if isinstance(ast, dict)
            else f"a {_KIND_NAMES[_kind(ast)]} literal"
        )
        raise PredicateError(f"the top-level expression must be a boolean operator, got {what}")
    return Predicate(ast, found, fn)


def evaluate(expr: object, context: dict) -> object:
    """Evaluate any (sub)expression to a JSON value; raises PredicateError only if `expr` is invalid.

    Validates and compiles on every call: hot loops should use `parse(...).evaluate`.

    >>> evaluate({"op": "length", "args": [{"var": "output.items"}]}, {"output": {"items": [1, 2]}})
    2
    """
    fn, _ = _compile(expr, "", 0, _Found())
    return fn(context)
