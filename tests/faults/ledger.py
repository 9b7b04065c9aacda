"""What the server promised, and what the harness found.

The :class:`Ledger` holds one :class:`Fact` per thing a write set — a user's name and role, an
annotation, an agent's version — keyed by a tuple ``(kind, owner, …)`` where ``owner`` is the
load worker that alone writes it. An acknowledged write sets the fact's value; a write whose
answer a kill swallowed adds a value it *may* have set. A check observes the server and
:meth:`Ledger.settle` s each fact: the observed value must be the acknowledged one or one of
the maybes (a write in flight may have happened or not, never half), after which the observed
value is what is known. Workflow executions keep richer records (faults.workflow_load).

The :class:`Report` counts requests, acknowledged writes and kills, and lists every loss,
duplicate and other failed check with enough detail to find it in the server log.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Hashable
from typing import Any


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()  # the value of a fact that does not exist (never written, or deleted)


class Fact:
    __slots__ = ("acked", "maybe")

    def __init__(self) -> None:
        self.acked: Any = ABSENT
        self.maybe: list = []


class Report:
    """Counts and findings of one run; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sent = 0
        self.acknowledged = 0
        self.kills = 0
        self.unknown = 0  # writes in flight at a kill (their answer never came)
        self.lost: list[str] = []
        self.duplicated: list[str] = []
        self.problems: list[str] = []
        self.counts: Counter = Counter()  # what the checks exercised, and acknowledged writes per operation
        # Seconds each answered request of a normal worker took, by whether the hostile worker
        # was active (faults.hostile)
        self.latencies: dict[bool, list[float]] = {False: [], True: []}

    def request(self) -> None:
        with self._lock:
            self.sent += 1

    def latency(self, hostile_active: bool, seconds: float) -> None:
        with self._lock:
            self.latencies[hostile_active].append(seconds)

    def ack(self, what: str) -> None:
        with self._lock:
            self.acknowledged += 1
            self.counts[f"acked {what}"] += 1

    def in_flight(self) -> None:
        with self._lock:
            self.unknown += 1

    def count(self, what: str, n: int = 1) -> None:
        with self._lock:
            self.counts[what] += n

    def loss(self, message: str) -> None:
        with self._lock:
            self.lost.append(message)

    def duplicate(self, message: str) -> None:
        with self._lock:
            self.duplicated.append(message)

    def problem(self, message: str) -> None:
        with self._lock:
            self.problems.append(message)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.problems)

    def summary(self) -> str:
        """The five numbers, then what the run exercised."""
        lines = [
            f"requests sent:        {self.sent}",
            f"acknowledged writes:  {self.acknowledged}",
            f"kills survived:       {self.kills}",
            f"lost:                 {len(self.lost)}",
            f"duplicated:           {len(self.duplicated)}",
            f"other failed checks:  {len(self.problems)}",
            f"in flight at a kill:  {self.unknown} writes; their facts and commands, looked at after the "
            f"restart: {self.counts['in-flight write applied']} applied, "
            f"{self.counts['in-flight write not applied']} not applied, "
            f"{self.counts['in-flight write undetermined']} undetermined",
        ]
        lines += [f"  {name}: {n}" for name, n in sorted(self.counts.items()) if not name.startswith("in-flight")]
        return "\n".join(lines)

    def failures(self, limit: int = 15) -> str:
        """The first findings of each kind, for a test's failure message."""
        out = []
        for title, items in (("LOST", self.lost), ("DUPLICATED", self.duplicated), ("PROBLEM", self.problems)):
            out += [f"{title}: {m}" for m in items[:limit]]
            if len(items) > limit:
                out.append(f"{title}: … and {len(items) - limit} more")
        return "\n".join(out)


class Ledger:
    """Facts keyed by ``(kind, owner, …)``; each owner writes only its own keys."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self._facts: dict[tuple, Fact] = {}
        self._lock = threading.Lock()
        self._executions: dict[str, Any] = {}  # idempotencyKey -> faults.workflow_load.ExecutionRecord
        self.ids: dict[str, str] = {}  # ids the server chose, by the unique name the harness gave (agents)

    def _fact(self, key: tuple) -> Fact:
        with self._lock:
            fact = self._facts.get(key)
            if fact is None:
                fact = self._facts[key] = Fact()
            return fact

    def acked(self, key: tuple, value: Hashable) -> None:
        self._fact(key).acked = value

    def unknown(self, key: tuple, value: Hashable) -> None:
        self._fact(key).maybe.append(value)

    def value(self, key: tuple) -> Any:
        """What is known of ``key`` (ABSENT if nothing)."""
        with self._lock:
            fact = self._facts.get(key)
        return ABSENT if fact is None else fact.acked

    def add_execution(self, record: Any) -> None:
        with self._lock:
            self._executions[record.key] = record

    def executions(self, owner: Hashable | None = None) -> list:
        """Execution records (of one owner, or all), in key order."""
        with self._lock:
            records = list(self._executions.values())
        return sorted((r for r in records if owner is None or r.owner == owner), key=lambda r: r.key)

    def in_doubt(self, key: tuple) -> bool:
        """Whether a write in flight at a kill may have changed ``key``."""
        with self._lock:
            fact = self._facts.get(key)
        return fact is not None and bool(fact.maybe)

    def keys(self, kind: str, owner: Hashable, present: bool = False) -> list[tuple]:
        """Keys of one kind and owner (only those known to exist with ``present``)."""
        with self._lock:
            items = list(self._facts.items())
        return [k for k, f in items if k[0] == kind and k[1] == owner and (not present or f.acked is not ABSENT)]

    def settle(self, key: tuple, observed: Any, default: Any = ABSENT) -> str:
        """Compare what the server shows for ``key`` with what it promised; report a loss or a
        write nobody made; from now on the observed value is known. ``default`` is the value
        of a fact no acknowledged write has set yet (a new document's access type, say).
        Returns ``"ok"``, ``"applied"`` / ``"not applied"`` (a write in flight at a kill),
        ``"lost"`` or ``"phantom"``."""
        fact = self._fact(key)
        acked, maybe = fact.acked if fact.acked is not ABSENT else default, fact.maybe
        fact.acked, fact.maybe = observed, []
        if observed == acked or observed in maybe:
            # (an in-flight write that set the value the fact already had counts as applied)
            verdict = "ok" if not maybe else "applied" if observed in maybe else "not applied"
        elif acked is ABSENT:
            self.report.problem(f"{key}: the server shows {observed!r}, which no write set")
            return "phantom"
        else:
            self.report.loss(
                f"{key}: acknowledged {acked!r}, the server shows {observed!r}"
                + (f" (in flight: {maybe!r})" if maybe else "")
            )
            return "lost"
        if maybe:
            self.report.count(f"in-flight write {verdict}")
        return verdict
