"""Creation-order keys from a sequence (``annotation_seq``, ``activity_seq``): what pages of
annotations and activities are ordered and resumed by.

A page's cursor is the last key it returned, so a row that becomes visible later with a
smaller key would be passed over by a reader already beyond it. DuckDB's single writer hands
keys out and commits in the same order. On PostgreSQL each process draws keys in its own
transaction, and two transactions can commit in the other order; ``scope`` (the pages' own
scope: a workspace's organization) makes the jobs that draw keys for it take them one after
the other, each holding a transaction-level advisory lock until it commits, so within a scope
keys become visible in increasing order. Jobs of different scopes do not wait for each other.
"""

from __future__ import annotations

from toolkit.store.seam import Writes


def next_keys(tx: Writes, sequence: str, n: int, scope: str | None = None) -> list[int]:
    """``n`` new keys of ``sequence``, ascending (one statement). With ``scope`` (on a shared
    store), keys of that scope are handed out in commit order.

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     store.write(lambda tx: next_keys(tx, "activity_seq", 3))
    [1, 2, 3]
    """
    if n <= 0:
        return []
    if scope is not None:
        tx.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [f"{sequence}:{scope}"])
    return sorted(s for (s,) in tx.execute(f"SELECT nextval('{sequence}') FROM unnest(?::BIGINT[])", [[0] * n]))
