"""Where the engine gets time and ids: injected, never global.

The engine never reads the wall clock and never draws from the global random generator,
so a run is a pure function of (definition, commands, clock readings, id source). The server
passes a real clock and a random id source; the simulator and the tests pass a
:class:`ManualClock` and :class:`SeededIds`, which makes two runs byte-identical.

>>> clock, ids = ManualClock(1_000), SeededIds(7)
>>> clock.advance(500); clock.now()
1500
>>> SeededIds(7).rand6() == ids.rand6()
True
"""

from __future__ import annotations

import random
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "IdSource", "SeededIds"]


@runtime_checkable
class Clock(Protocol):
    """Anything with ``now() -> int``: epoch milliseconds."""

    def now(self) -> int: ...


class ManualClock:
    """A clock that moves only when told to: the simulator's virtual time, and the tests'.

    >>> c = ManualClock(10); c.set(25); c.advance(5); c.now()
    30
    """

    __slots__ = ("_ms",)

    def __init__(self, start_ms: int = 0) -> None:
        self._ms = int(start_ms)

    def now(self) -> int:
        return self._ms

    def set(self, ms: int) -> None:
        """Jump to ``ms``. Going backwards is allowed (tests may want it); the engine never checks."""
        self._ms = int(ms)

    def advance(self, ms: int) -> None:
        self._ms += int(ms)

    def __repr__(self) -> str:
        return f"ManualClock({self._ms})"


@runtime_checkable
class IdSource(Protocol):
    """Where new ids come from: ``rand6`` for root step ids, ``execution_id`` for dispatches."""

    def rand6(self) -> str: ...

    def execution_id(self) -> str: ...


class SeededIds:
    """Deterministic ids from a private ``random.Random(seed)``.

    A private instance, not the module-level generator: other code drawing random numbers
    (a simulator policy, a test) can never shift the ids an execution gets.

    >>> ids = SeededIds(1)
    >>> len(ids.rand6()), ids.execution_id().startswith("ex_")
    (6, True)
    """

    __slots__ = ("_rng",)

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)

    def rand6(self) -> str:
        """Six lowercase hex characters (24 random bits)."""
        return format(self._rng.getrandbits(24), "06x")

    def execution_id(self) -> str:
        return "ex_" + format(self._rng.getrandbits(64), "016x")

    def __repr__(self) -> str:
        return "SeededIds(...)"
