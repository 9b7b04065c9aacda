"""JSON values as predicates see them: truthiness, kinds and deep equality (semantics §3.1).

Pure functions over plain JSON data (dicts, lists, strings, numbers, booleans, None), safe on
values of any depth: nothing here recurses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.work import Work

__all__ = ["truthy", "json_equal"]

_EQUAL_CHUNK = 4096  # deep-equality steps charged at a time (a huge comparison stops early)


def truthy(value: object) -> bool:
    """JSON truthiness: null, false, 0, "", [] and {} are false.

    >>> [truthy(v) for v in (None, 0.0, "", [], {}, "0", [0])]
    [False, False, False, False, False, True, True]
    """
    if value is None or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, (str, list, dict)):
        return len(value) > 0
    return True


_NULL, _BOOL, _NUM, _STR, _LIST, _DICT, _OTHER = range(7)
_KIND_NAMES = ("null", "boolean", "number", "string", "array", "object", "non-JSON value")
_KIND_BY_TYPE = {type(None): _NULL, bool: _BOOL, int: _NUM, float: _NUM, str: _STR, list: _LIST, dict: _DICT}
_SAME_TYPE_FAST = frozenset({str, int, float, bool, type(None)})


def _kind(v: object) -> int:
    kind = _KIND_BY_TYPE.get(type(v))
    if kind is None:  # subclasses of JSON types (OrderedDict, IntEnum, ...)
        kind = next((k for t, k in _KIND_BY_TYPE.items() if isinstance(v, t)), _OTHER)
    return kind


def json_equal(a: object, b: object, work: Work | None = None) -> bool:
    """Deep JSON equality: numbers compare numerically, booleans are not numbers.

    With a :class:`~toolkit.work.Work`, every value compared past the top is charged to it.

    >>> json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]}), json_equal(True, 1)
    (True, False)
    """
    if a is b:
        return True
    ta = type(a)
    if ta is type(b) and ta in _SAME_TYPE_FAST:
        return a == b
    # An explicit stack, not recursion: context values may nest arbitrarily
    # deep and evaluation must never hit RecursionError.
    # Any: the kind tests below narrow each pair, which mypy cannot follow through _kind().
    stack: list[tuple[Any, Any]] = [(a, b)]
    steps, equal = 0, True
    while stack:
        steps += 1
        if work is not None and not steps % _EQUAL_CHUNK:
            work.charge(_EQUAL_CHUNK)
        x, y = stack.pop()
        if x is y:
            continue
        k = _kind(x)
        if k != _kind(y):
            equal = False
            break
        if k == _LIST:
            if len(x) != len(y):
                equal = False
                break
            stack.extend(zip(x, y))
        elif k == _DICT:
            if len(x) != len(y) or x.keys() != y.keys():
                equal = False
                break
            stack.extend((x[key], y[key]) for key in x)
        elif k == _OTHER or x != y:  # a non-JSON value is only equal to itself
            equal = False
            break
    if work is not None:
        work.charge(steps % _EQUAL_CHUNK)
    return equal
