"""The Parquet mirror of a PostgreSQL database (toolkit.analytics.shared_mirror), on a real
PostgreSQL: rows of transactions that commit out of order are each mirrored once, and only
after they committed; one mirror at a time writes a folder, and the next carries on from it."""

from __future__ import annotations

import psycopg
import pytest

from toolkit.analytics import open_mirror
from toolkit.analytics.shared_mirror import SharedMirror
from toolkit.store.postgres.migrate import migrate

pytestmark = pytest.mark.usefixtures("postgres_cluster")


def write(con: psycopg.Connection, execution_id: str, seq: int = 1) -> None:
    """An execution's command and event, as the server writes them: one transaction (left open)."""
    con.execute(
        "INSERT INTO commands (workspace_id, execution_id, version, applied_at, kind, payload) "
        "VALUES ('ws', %s, %s, 1, 'Dispatch', '{}')",
        [execution_id, seq],
    )
    con.execute(
        "INSERT INTO events (workspace_id, execution_id, seq, event_id, type, timestamp, correlation_id, "
        "external, data) VALUES ('ws', %s, %s, %s, 'execution.dispatched', 1, 'c', true, '{}')",
        [execution_id, seq, f"ev_{execution_id}_{seq}"],
    )


def mirrored(folder) -> list[str]:
    with open_mirror(folder) as con:
        return [r[0] for r in con.execute("SELECT event_id FROM events ORDER BY 1").fetchall()]


def test_a_transaction_that_commits_late_is_mirrored_once_after_it_committed(postgres_dsn, tmp_path):
    with psycopg.connect(postgres_dsn) as con:
        migrate(con)
    folder = tmp_path / "events"
    mirror = SharedMirror(postgres_dsn, folder, owner="one")
    with psycopg.connect(postgres_dsn) as early, psycopg.connect(postgres_dsn) as late:
        write(early, "x1")  # begins first (the lower transaction id), commits last
        write(late, "x2")
        late.commit()
        mirror.sync()
        assert mirrored(folder) == [], "x2 waits until every older transaction has ended"
        early.commit()
        write(late, "x2", seq=2)
        late.commit()
    assert mirror.sync() == {"commands": 3, "events": 3}
    assert mirrored(folder) == ["ev_x1_1", "ev_x2_1", "ev_x2_2"]
    assert mirror.sync() == {}
    mirror.close()


def test_one_mirror_at_a_time_writes_a_folder_and_the_next_carries_on(postgres_dsn, tmp_path):
    with psycopg.connect(postgres_dsn) as con:
        migrate(con)
        write(con, "x1")
        con.commit()
    folder = tmp_path / "events"
    first, second = SharedMirror(postgres_dsn, folder, owner="a"), SharedMirror(postgres_dsn, folder, owner="b")
    assert first.sync()["events"] == 1 and first.holding
    with psycopg.connect(postgres_dsn) as con:
        write(con, "x2")
        con.commit()
    assert second.sync() == {} and not second.holding, "the first one's lease has not run out"
    first.close()  # a clean stop gives the lease up
    assert second.sync() == {"commands": 1, "events": 1} and second.holding
    assert mirrored(folder) == ["ev_x1_1", "ev_x2_1"]
    second.close()
