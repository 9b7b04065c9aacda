"""The work budget of one engine command: predicates charge it, and stop when it runs out.

Custom-edge predicates run inside the command that routes their step — on the server, on its
single writer. :class:`Work` counts what they do in units of work (see :mod:`toolkit.limits`
for the unit), not time, so a command over :data:`~toolkit.limits.COMMAND_WORK_BUDGET` fails
the same way on every machine, in the simulator and in a replay.

It also carries ``memo``: results of regex searches already made, ``(pattern, text) ->
bool``. A host may fill it *before* the command reaches the writer (a rehearsal on a copy of
the state, in the request's own thread); the command then finds its answers there instead of
searching again. A search is charged in full whether it is answered from the memo or not,
so the memo changes how long a command takes, never what it does.

>>> w = Work(limit=10)
>>> w.charge(4); w.spent
4
>>> w.charge(7)
Traceback (most recent call last):
...
toolkit.work.WorkLimitExceeded: work limit of 10 units exceeded (11 units)
"""

from __future__ import annotations

from toolkit.limits import COMMAND_WORK_BUDGET

__all__ = ["Work", "WorkLimitExceeded"]


class WorkLimitExceeded(Exception):
    """A command spent more than its budget. ``edge_index`` names the custom edge whose
    predicate was being evaluated (set by the engine's routing; None outside it)."""

    def __init__(self, spent: int, limit: int) -> None:
        super().__init__(f"work limit of {limit} units exceeded ({spent} units)")
        self.spent = spent
        self.limit = limit
        self.edge_index: int | None = None


class Work:
    """The budget (``limit``), what is ``spent`` so far, and the regex ``memo``."""

    __slots__ = ("limit", "spent", "memo")

    def __init__(self, limit: int = COMMAND_WORK_BUDGET, memo: dict | None = None) -> None:
        self.limit = limit
        self.spent = 0
        self.memo = memo if memo is not None else {}

    def charge(self, units: int) -> None:
        """Spend ``units``; raise :class:`WorkLimitExceeded` once the total passes the limit."""
        self.spent += units
        if self.spent > self.limit:
            raise WorkLimitExceeded(self.spent, self.limit)

    def search(self, search, pattern: str, text: str, units_per_char: int) -> bool:
        """``search(text)``, charged ``len(text) * units_per_char``, answered from the memo
        when a rehearsal already made it."""
        self.charge(len(text) * units_per_char)
        key = (pattern, text)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = bool(search(text))
        return found
