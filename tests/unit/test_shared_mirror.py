"""The Parquet mirror of a PostgreSQL database (toolkit.analytics.shared_mirror), on a real
PostgreSQL: rows of transactions that commit out of order are each mirrored once, and only
after they committed, each version of an execution once, in batches of whole transactions;
one mirror at a time writes a folder, and the next carries on from it."""

from __future__ import annotations

import psycopg
import pyarrow.parquet as pq
import pytest

from toolkit.analytics import MirrorError, open_mirror
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


def committed(dsn: str, *transactions: list[str]) -> None:
    """Migrate the database at ``dsn``, then commit each transaction: the executions it writes."""
    with psycopg.connect(dsn) as con:
        migrate(con)
        for execution_ids in transactions:
            for execution_id in execution_ids:
                write(con, execution_id)
            con.commit()


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
    committed(postgres_dsn, ["x1"])
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


def test_an_execution_changed_past_the_snapshots_horizon_is_mirrored_at_each_version_once(postgres_dsn, tmp_path):
    """A sync sees an execution as it is now, but reads only the commands below its snapshot's
    oldest running transaction; a change committed above that horizon is read by the next sync,
    which must not export the same version of the execution (and its steps) a second time."""
    from toolkit.client import LocalClient
    from toolkit.services.context import Services
    from toolkit.services.workspaces import Authenticator, create_workspace
    from toolkit.store import open_store

    store = open_store(postgres_dsn)
    try:
        services = Services(store)
        creds = create_workspace(store, "mirror", now_ms=services.clock.now())
        client = LocalClient(services, Authenticator(store).authenticate(creds.api_key, creds.auth_token))
        review = {"nodeId": "review", "type": "human", "config": {"reviewers": [{"userId": "ann"}, {"userId": "bob"}]}}
        agents = [{"nodeId": n, "type": "agent", "config": {"agentId": n}} for n in ("publish", "archive")]
        edges = [
            {"from": "review", "to": "publish", "on": "approve"},
            {"from": "review", "to": "archive", "on": "reject"},
        ]
        client.create_definition(definitionId="mirrored", name="mirrored", nodes=[review, *agents], edges=edges)
        execution_id = client.dispatch("mirrored")["executionId"]
        (step,) = client.get_execution(execution_id)["steps"]
        folder = tmp_path / "events"
        mirror = SharedMirror(postgres_dsn, folder, owner="one")
        with psycopg.connect(postgres_dsn) as blocker:
            blocker.execute("SELECT pg_current_xact_id()")  # a transaction that stays open: the horizon
            client.record_reviewer_decision(execution_id, step["stepId"], "ann", "approve")
            mirror.sync()  # the dispatch is below the horizon, the decision above it
        mirror.sync()
        mirror.close()
        with psycopg.connect(postgres_dsn) as con:
            stored = con.execute("SELECT count(*), max(version) FROM executions").fetchone()
            steps = con.execute("SELECT count(*) FROM steps").fetchone()
        with open_mirror(folder) as con:
            assert con.execute("SELECT count(*), max(version) FROM executions").fetchone() == stored
            assert con.execute("SELECT count(*) FROM steps").fetchone() == steps
            assert con.execute("SELECT count(*) FROM commands").fetchone() == (2,)
    finally:
        store.close()


def test_a_mirror_far_behind_catches_up_in_batches_of_whole_transactions(postgres_dsn, tmp_path):
    big = [f"big{i}" for i in range(6)]  # one transaction larger than a batch
    committed(postgres_dsn, *([f"a{i}"] for i in range(10)), big, *([f"z{i}"] for i in range(3)))
    folder = tmp_path / "events"
    mirror = SharedMirror(postgres_dsn, folder, owner="one", chunk=4)
    assert mirror.sync() == {"commands": 19, "events": 19}
    assert mirrored(folder) == sorted(
        f"ev_{x}_1" for x in [*(f"a{i}" for i in range(10)), *(f"big{i}" for i in range(6)), "z0", "z1", "z2"]
    )
    batches = [
        pq.read_table(part).column("execution_id").to_pylist()
        for part in sorted((folder / "commands").glob("*.parquet"))
    ]
    assert len(batches) >= 4 and all(len(b) <= 6 for b in batches), batches
    assert any(set(b) >= {f"big{i}" for i in range(6)} for b in batches), "a transaction is never split"
    assert mirror.sync() == {}
    mirror.close()


def test_a_batch_too_slow_for_the_lease_is_not_written_and_the_next_reads_half_as_much(postgres_dsn, tmp_path):
    committed(postgres_dsn, ["x1"])
    folder = tmp_path / "events"
    mirror = SharedMirror(postgres_dsn, folder, owner="one", lease_ms=1, chunk=400)  # any batch outlasts 0.5 ms
    with pytest.raises(MirrorError, match="next: 200 commands"):
        mirror.sync()
    assert mirror.chunk == 200 and not list(folder.glob("*/*.parquet"))
    mirror.close()
