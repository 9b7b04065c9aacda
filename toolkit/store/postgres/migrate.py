"""Numbered PostgreSQL migrations, applied once each, in order, by one process at a time.

The files mirror ``toolkit/store/migrations`` number for number: the same tables and columns
in PostgreSQL's dialect (``tests/unit/test_store_schemas.py`` holds the two to that). Several
server processes may start at once against a new database; a session advisory lock makes one
of them migrate while the others wait, then find nothing left to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.store.migrate import migrations

if TYPE_CHECKING:  # psycopg is the optional `postgres` extra
    import psycopg

# pg_advisory_lock takes a bigint; this one spells "collab" in ASCII.
MIGRATION_LOCK = 0x636F6C6C6162


def migrate(con: psycopg.Connection[Any]) -> list[str]:
    """Apply pending migrations on a psycopg connection (autocommit off), each in its own
    transaction, under the migration lock; returns the names applied."""
    con.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
    con.commit()
    try:
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (number INTEGER PRIMARY KEY, name VARCHAR, "
            "applied_at TIMESTAMP DEFAULT now())"
        )
        con.commit()
        done = {n for (n,) in con.execute("SELECT number FROM schema_migrations").fetchall()}
        con.commit()
        applied = []
        for number, name, sql in migrations("toolkit.store.postgres"):
            if number in done:
                continue
            try:
                con.execute(sql)
                con.execute("INSERT INTO schema_migrations (number, name) VALUES (%s, %s)", [number, name])
                con.commit()
            except Exception:
                con.rollback()
                raise
            applied.append(name)
        return applied
    finally:
        con.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])
        con.commit()
