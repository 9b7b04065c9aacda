"""The writer's version-checked updates on DuckDB: applied at the expected version only, the
whole group rolled back (and each job retried alone) when one is stale or its row is gone."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


WIDE = ("id", "expected_version", "label", "due", "note", "version")


@pytest.fixture
def wide():
    store = Store(":memory:")
    store.write(
        lambda tx: tx.execute(
            "CREATE TABLE w (id VARCHAR PRIMARY KEY, label VARCHAR, due BIGINT, note VARCHAR, version INTEGER)"
        )
    )
    store.write(lambda tx: tx.execute("INSERT INTO w SELECT 'r' || i, 'first', NULL, 'n', 1 FROM range(100) t(i)"))
    yield store
    store.close()


# One store for every example: each reads the rows it starts from.
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    updates=st.lists(
        st.tuples(
            st.integers(0, 99),  # which row
            st.booleans(),  # stale?
            st.one_of(st.none(), st.integers(-(2**62), 2**62)),  # due: NULL or a BIGINT
            st.one_of(st.none(), st.text(max_size=20)),  # note: NULL or text, quotes and all
        ),
        min_size=1,
        max_size=80,
    )
)
def test_a_group_of_updates_writes_each_row_its_own_values_or_none_of_them(wide, updates):
    """Many rows in one statement (past the rows one statement takes): each row gets its own
    values, NULLs and large integers included, and one stale row writes nothing at all."""
    before = _state(wide)
    expected = dict(before)
    for row, _stale, due, note in updates:
        key = f"r{row}"
        version = expected[key][3]
        expected[key] = (f"label {version + 1}", due, note, version + 1)

    def job(tx):
        current = {k: v[3] for k, v in before.items()}
        for row, stale, due, note in updates:
            key = f"r{row}"
            seen = current[key] + (5 if stale else 0)
            tx.update("w", WIDE, (key, seen, f"label {current[key] + 1}", due, note, current[key] + 1))
            current[key] += 1

    stale_anywhere = any(_first_check_is_stale(updates))
    if stale_anywhere:
        with pytest.raises(ConcurrentChange):
            wide.write(job)
        expected = before
    else:
        wide.write(job)
    after = _state(wide)
    assert after == expected


def _state(store) -> dict:
    return {r[0]: r[1:] for r in store.read("SELECT id, label, due, note, version FROM w").fetchall()}


def _first_check_is_stale(updates):
    """Updates of one row in one job collapse to the first one's version check."""
    seen: set[int] = set()
    for row, stale, _due, _note in updates:
        if row not in seen:
            seen.add(row)
            yield stale
