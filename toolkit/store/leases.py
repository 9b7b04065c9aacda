"""Leases on work that must happen once cluster-wide (table ``leases``): a webhook delivery
attempt (kind ``delivery``, key the event id), a background agent run (kind ``agent-run``,
key ``"<execution id>/<step id>"``) or a turn of periodic upkeep (kind ``maintenance``).

The process whose ``owner`` id holds an unexpired lease does the work; it renews its leases
while it lives and deletes each when the work is recorded. A process that dies stops renewing,
its leases run out, and another process may then claim the work. An expired lease is as good
as none, so every statement here compares ``lease_until`` with the caller's clock.

>>> from toolkit.store import Store
>>> with Store(":memory:") as store:
...     store.write(lambda tx: claim(tx, "delivery", ["ev1", "ev2"], "a", now=0, until=100))
...     store.write(lambda tx: claim(tx, "delivery", ["ev2", "ev3"], "b", now=50, until=150))
...     store.write(lambda tx: claim(tx, "delivery", ["ev2"], "b", now=100, until=200))
...     store.write(lambda tx: release(tx, "delivery", ["ev1", "ev2"], "a"))
['ev1', 'ev2']
['ev3']
['ev2']
['ev1']
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.store.seam import Read, Writes

DELIVERY = "delivery"
AGENT_RUN = "agent-run"
MAINTENANCE = "maintenance"  # periodic work one process does at a time (retention), key its name


# Taken when there is no lease, or it ran out, or it is already the caller's (a renewal).
# Under PostgreSQL's READ COMMITTED the conflict check sees the other process's committed
# lease, so of two processes claiming one key at once exactly one gets it back.
_CLAIM = (
    "INSERT INTO leases (kind, key, owner, lease_until) SELECT ?, unnest(?::VARCHAR[]), ?, ? "
    "ON CONFLICT (kind, key) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until "
    "WHERE leases.lease_until <= ? OR leases.owner = excluded.owner RETURNING key"
)


def claim(tx: Writes, kind: str, keys: Sequence[str], owner: str, *, now: int, until: int) -> list[str]:
    """Take the leases on ``keys`` that are free (none, or run out by ``now``) or already
    ``owner``'s, until ``until``; returns the keys taken, in the order given."""
    if not keys:
        return []
    taken = {k for (k,) in tx.execute(_CLAIM, [kind, list(keys), owner, until, now]).fetchall()}
    return [k for k in keys if k in taken]


def release(tx: Writes, kind: str, keys: Sequence[str], owner: str) -> list[str]:
    """Delete ``owner``'s leases on ``keys``; returns the keys it still held (in the order
    given) — a key missing was taken over by another process after the lease ran out."""
    if not keys:
        return []
    rows = tx.execute(
        "DELETE FROM leases WHERE kind = ? AND list_contains(?::VARCHAR[], key) AND owner = ? RETURNING key",
        [kind, list(keys), owner],
    ).fetchall()
    held = {k for (k,) in rows}
    return [k for k in keys if k in held]


def renew(tx: Writes, kind: str, keys: Sequence[str], owner: str, until: int) -> list[str]:
    """Move ``owner``'s leases on ``keys`` on to ``until``; returns the keys it still held."""
    if not keys:
        return []
    rows = tx.execute(
        "UPDATE leases SET lease_until = ? WHERE kind = ? AND list_contains(?::VARCHAR[], key) AND owner = ? "
        "RETURNING key",
        [until, kind, list(keys), owner],
    ).fetchall()
    return [str(k) for (k,) in rows]


def expire_all(tx: Writes, owner: str) -> int:
    """Let every lease of ``owner`` run out now (a process stopping): the others take its work
    over at once instead of waiting the lease out, and drop the leases of work that ended."""
    return len(tx.execute("UPDATE leases SET lease_until = 0 WHERE owner = ? RETURNING key", [owner]).fetchall())


def expired(read: Read, kind: str, now: int, limit: int = 500) -> list[str]:
    """Keys of ``kind`` whose lease ran out by ``now`` (their holder stopped renewing), oldest first."""
    rows = read(
        "SELECT key FROM leases WHERE kind = ? AND lease_until <= ? ORDER BY lease_until LIMIT ?", [kind, now, limit]
    ).fetchall()
    return [k for (k,) in rows]


def drop_expired(tx: Writes, kind: str, keys: Sequence[str], now: int) -> int:
    """Delete the leases on ``keys`` that are still run out at ``now`` (their work is over)."""
    if not keys:
        return 0
    return len(
        tx.execute(
            "DELETE FROM leases WHERE kind = ? AND list_contains(?::VARCHAR[], key) AND lease_until <= ? RETURNING key",
            [kind, list(keys), now],
        ).fetchall()
    )
