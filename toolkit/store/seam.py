"""What the store-area modules take, whichever backend is behind it: ``Read`` is
``store.read`` or a write job's ``tx.execute``; ``Writes`` is the job's ``tx`` (DuckDB's
:class:`~toolkit.store.writer.Tx` or PostgreSQL's ``PgTx``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from toolkit.store.writer import Params, Row, Rows

Read = Callable[[str, Params], Rows]


class Writes(Protocol):
    def execute(self, sql: str, params: Params | None = None) -> Rows: ...

    def append(self, table: str, columns: tuple[str, ...], rows: list[Row]) -> None: ...

    def update(self, table: str, columns: tuple[str, ...], row: Row) -> None: ...

    def next_key(self) -> int: ...

    def next_keys(self, n: int) -> list[int]: ...


def count(read: Read, sql: str, params: Params) -> int:
    """The one number ``sql`` (an aggregate without GROUP BY) answers.

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     count(store.read, "SELECT count(*) FROM workspaces WHERE dev = ?", [True])
    0
    """
    row = read(sql, params).fetchone()
    assert row is not None  # an aggregate without GROUP BY always answers one row
    return int(row[0])
