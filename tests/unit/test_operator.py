"""What ``POST /admin/backup`` does behind the operator token, on both backends: on DuckDB a
consistent copy of the database beside it, which opens and holds what was written; on
PostgreSQL a refusal that points to pg_dump, not an internal error."""

from __future__ import annotations

import duckdb
import pytest

from toolkit.errors import ApiError, ErrorCode
from toolkit.services import operator
from toolkit.services.workspaces import create_workspace
from toolkit.store import Store, open_store


def test_a_backup_is_a_copy_of_the_database_beside_it(tmp_path):
    with Store(tmp_path / "collab.duckdb") as store:
        creds = create_workspace(store, "a", now_ms=1)
        copy = operator.backup(store)
    assert copy.parent == tmp_path and copy.name.startswith(".backup-")
    with duckdb.connect(str(copy), read_only=True) as con:
        assert con.execute("SELECT workspace_id FROM workspaces").fetchall() == [(creds.workspace_id,)]


def test_on_postgresql_the_backup_is_refused_with_what_to_use_instead(postgres_dsn):
    with open_store(postgres_dsn) as store, pytest.raises(ApiError) as refused:
        operator.backup(store)
    assert refused.value.code is ErrorCode.FAILED_PRECONDITION and "pg_dump" in refused.value.message
