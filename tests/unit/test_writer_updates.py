"""The writer's version-checked updates on DuckDB: applied at the expected version only, the
whole group rolled back (and each job retried alone) when one is stale or its row is gone."""

from __future__ import annotations

import pytest

from toolkit.store import Store
from toolkit.store.writer import ConcurrentChange

COLUMNS = ("id", "expected_version", "label", "version")


@pytest.fixture
def store():
    store = Store(":memory:")
    store.write(lambda tx: tx.execute("CREATE TABLE t (id VARCHAR PRIMARY KEY, label VARCHAR, version INTEGER)"))
    store.write(lambda tx: tx.execute("INSERT INTO t VALUES ('a', 'first', 1), ('b', 'first', 1)"))
    yield store
    store.close()


def rows(store):
    return store.read("SELECT id, label, version FROM t ORDER BY id").fetchall()


def test_an_update_at_the_expected_version_is_written(store):
    store.write(lambda tx: tx.update("t", COLUMNS, ("a", 1, "second", 2)))
    assert rows(store) == [("a", "second", 2), ("b", "first", 1)]


def test_updates_of_one_row_in_one_job_collapse_to_the_first_check_and_the_last_values(store):
    def twice(tx):
        tx.update("t", COLUMNS, ("a", 1, "second", 2))
        tx.update("t", COLUMNS, ("a", 2, "third", 3))

    store.write(twice)
    assert rows(store) == [("a", "third", 3), ("b", "first", 1)]


@pytest.mark.parametrize(
    "stale",
    [("a", 7, "second", 8), ("missing", 1, "second", 2)],
    ids=["another version", "no such row"],
)
def test_a_stale_update_fails_its_job_and_writes_nothing(store, stale):
    def job(tx):
        tx.update("t", COLUMNS, ("b", 1, "second", 2))  # fine alone: must not be kept either
        tx.update("t", COLUMNS, stale)

    with pytest.raises(ConcurrentChange, match="changed concurrently"):
        store.write(job)
    assert rows(store) == [("a", "first", 1), ("b", "first", 1)]
    store.write(lambda tx: tx.update("t", COLUMNS, ("b", 1, "second", 2)))  # the writer goes on
    assert rows(store) == [("a", "first", 1), ("b", "second", 2)]


def test_a_stale_job_in_a_group_does_not_take_the_others_down(store):
    def hold(con):  # queue both jobs behind this one, so that they commit as one group
        later.append(store.writer.submit(lambda tx: tx.update("t", COLUMNS, ("a", 1, "second", 2))))
        later.append(store.writer.submit(lambda tx: tx.update("t", COLUMNS, ("b", 5, "second", 6))))

    later: list = []
    store.writer.exclusive(hold)
    assert later[0].result() is None
    with pytest.raises(ConcurrentChange):
        later[1].result()
    assert rows(store) == [("a", "second", 2), ("b", "first", 1)]
