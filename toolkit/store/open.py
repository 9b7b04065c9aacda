"""Choose the backend by what ``--db`` names: a file is DuckDB, a URL is PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from toolkit.store.duck import Store

if TYPE_CHECKING:
    from toolkit.store.postgres.store import PostgresStore

# Either backend; what services take. (A string: PostgresStore is imported for type checking
# only, since psycopg is the optional `postgres` extra.)
AnyStore: TypeAlias = "Store | PostgresStore"


def is_url(db: str | Path) -> bool:
    """Whether ``db`` names a PostgreSQL database rather than a DuckDB file.

    >>> is_url("postgresql://localhost/collab"), is_url("postgres://h/db"), is_url("data/collab.duckdb")
    (True, True, False)
    """
    return str(db).startswith(("postgresql://", "postgres://"))


def open_store(db: str | Path) -> AnyStore:
    """The store ``db`` names, opened (created and migrated on first use).

    >>> with open_store(":memory:") as store:
    ...     store.dialect
    'duckdb'
    """
    if is_url(db):
        from toolkit.store.postgres.store import PostgresStore  # psycopg is the optional `postgres` extra

        return PostgresStore(str(db))
    return Store(db)
