"""Numbered SQL migrations: ``migrations/NNN_name.sql``, applied once each, in order."""

from __future__ import annotations

import re
from importlib import resources

import duckdb

MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


def migrations(package: str = "toolkit.store") -> list[tuple[int, str, str]]:
    """(number, file name, SQL) of every migration in ``package``'s ``migrations`` folder, in
    order: DuckDB's by default, ``toolkit.store.postgres`` for PostgreSQL's."""
    folder = resources.files(package).joinpath("migrations")
    found = []
    for entry in folder.iterdir():
        match = MIGRATION_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text()))
    return sorted(found)


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations, each in its own transaction; returns the names applied."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (number INTEGER PRIMARY KEY, name VARCHAR, "
        "applied_at TIMESTAMP DEFAULT now())"
    )
    done = {n for (n,) in con.execute("SELECT number FROM schema_migrations").fetchall()}
    applied = []
    for number, name, sql in migrations():
        if number in done:
            continue
        con.execute("BEGIN")
        try:
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations (number, name) VALUES (?, ?)", [number, name])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied
