"""Undo and redo for the Designer: every change is one step, whatever made it.

The Designer's definition is a plain JSON dict, so a step is kept as the definition's JSON
text before the change (key order kept). Undoing a step gives back that text
exactly, so an undone edit leaves the definition byte for byte as it was. Snapshots rather
than inverse operations: one mechanism covers every edit (forms, canvas, code, loading a
file) and cannot drift from the edit functions; at 200 steps of a 100-node definition this
is a few megabytes.

>>> h = History(limit=2)
>>> h.record('{"a": 1}'); h.record('{"a": 2}'); h.record('{"a": 3}')
>>> h.undo('{"a": 4}'), h.undo('{"a": 3}'), h.undo('{"a": 2}')
('{"a": 3}', '{"a": 2}', None)
>>> h.redo('{"a": 2}')
'{"a": 3}'
"""

from __future__ import annotations

import json
from collections import deque

import orjson

__all__ = ["History", "snapshot", "restore", "LIMIT"]

LIMIT = 200  # steps kept (issue 17); the oldest step is dropped first


def snapshot(raw: dict) -> str:
    """The definition as the text a history step keeps (key order preserved). orjson is
    several times faster; what it cannot write exactly (an integer beyond 64 bits, a
    non-string key) goes through :mod:`json`."""
    try:
        return orjson.dumps(raw).decode("utf-8")
    except TypeError:
        return json.dumps(raw, ensure_ascii=False)


def restore(state: str) -> dict:
    """The definition a snapshot holds."""
    return json.loads(state)


class History:
    """Two stacks of definition snapshots: the states before each change (undo) and the
    states undone since the last change (redo)."""

    def __init__(self, limit: int = LIMIT):
        self.limit = limit
        self._undo: deque[str] = deque(maxlen=limit)
        self._redo: list[str] = []

    def record(self, before: str) -> None:
        """A change was made; ``before`` is the definition as it was. Clears the redo stack."""
        self._undo.append(before)
        self._redo.clear()

    def undo(self, current: str) -> str | None:
        """The state to go back to (``current`` becomes redoable), or None when nothing is left."""
        if not self._undo:
            return None
        self._redo.append(current)
        return self._undo.pop()

    def redo(self, current: str) -> str | None:
        """The state an undo left, or None when nothing was undone since the last change."""
        if not self._redo:
            return None
        self._undo.append(current)
        return self._redo.pop()

    @property
    def can_undo(self) -> int:
        """How many steps can be undone."""
        return len(self._undo)

    @property
    def can_redo(self) -> int:
        """How many undone steps can be redone."""
        return len(self._redo)

    def clear(self) -> None:
        self._undo.clear()
        self._redo.clear()
