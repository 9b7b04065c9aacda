"""The PostgreSQL store's version-checked updates, sent with the job's inserts and COMMIT as
one query string: a stale one aborts the transaction before the COMMIT (nothing of the job is
written) and the job runs again from the start; one that can never apply ends as ABORTED. The
string's values are bound on the client, so any text goes in and comes back as it was."""

from __future__ import annotations

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.errors import ApiError, ErrorCode
from toolkit.store.postgres.store import PostgresStore

COLUMNS = ("id", "expected_version", "label", "version")


@pytest.fixture
def store(postgres_dsn):
    store = PostgresStore(postgres_dsn)
    store.write(lambda tx: tx.execute("CREATE TABLE t (id VARCHAR PRIMARY KEY, label VARCHAR, version INTEGER)"))
    store.write(lambda tx: tx.execute("CREATE TABLE log (id VARCHAR, label VARCHAR)"))
    store.write(lambda tx: tx.execute("INSERT INTO t VALUES ('a', 'first', 1)"))
    yield store
    store.close()


def test_a_job_whose_row_changed_under_it_runs_again_and_is_written_once(store, postgres_dsn):
    attempts = []

    def relabel(tx):
        ((label, version),) = tx.execute("SELECT label, version FROM t WHERE id = 'a'").fetchall()
        attempts.append(label)
        if len(attempts) == 1:  # another process changes the row between this read and the commit
            with psycopg.connect(postgres_dsn, autocommit=True) as other:
                other.execute("UPDATE t SET label = 'theirs', version = 2 WHERE id = 'a'")
        tx.append("log", ("id", "label"), [("a", f"{label}+mine")])
        tx.update("t", COLUMNS, ("a", version, f"{label}+mine", version + 1))
        return label

    assert store.write(relabel) == "theirs"
    assert attempts == ["first", "theirs"]
    assert store.read("SELECT label, version FROM t").fetchall() == [("theirs+mine", 3)]
    assert store.read("SELECT label FROM log").fetchall() == [("theirs+mine",)]  # the first attempt's row is gone


def test_an_update_that_can_never_apply_ends_aborted_and_writes_nothing(store):
    def stale(tx):
        tx.execute("SELECT 1")  # the connection has answered: the COMMIT rides with the writes
        tx.append("log", ("id", "label"), [("a", "never")])
        tx.update("t", COLUMNS, ("a", 7, "never", 8))

    with pytest.raises(ApiError) as raised:
        store.write(stale)
    assert raised.value.code == ErrorCode.ABORTED
    assert store.read("SELECT label, version FROM t").fetchall() == [("first", 1)]
    assert store.read("SELECT count(*) FROM log").fetchall() == [(0,)]
    store.write(lambda tx: tx.update("t", COLUMNS, ("a", 1, "second", 2)))  # the store goes on
    assert store.read("SELECT label, version FROM t").fetchall() == [("second", 2)]


# Any text PostgreSQL can hold (valid UTF-8, no NUL; the API refuses a lone surrogate before
# a store sees it), with what quoting must get right drawn often.
LABELS = st.text(
    alphabet=st.one_of(st.sampled_from("'\\\"%?$;-/*\n\r\t"), st.characters(codec="utf-8", exclude_characters="\x00"))
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=st.lists(LABELS, min_size=1, max_size=5))
def test_any_text_is_written_and_read_back_as_it_was(store, labels):
    store.write(lambda tx: tx.execute("DELETE FROM log"))
    (version,) = store.read("SELECT version FROM t WHERE id = 'a'").fetchone()

    def write(tx):
        ((echoed,),) = tx.execute("SELECT ?::VARCHAR", [labels[0]]).fetchall()  # the job's first statement
        tx.append("log", ("id", "label"), [(str(n), label) for n, label in enumerate(labels)])
        tx.update("t", COLUMNS, ("a", version, labels[-1], version + 1))
        return echoed

    assert store.write(write) == labels[0]
    assert [label for (label,) in store.read("SELECT label FROM log ORDER BY id::int").fetchall()] == labels
    assert store.read("SELECT label, version FROM t").fetchall() == [(labels[-1], version + 1)]


def test_text_with_a_nul_character_is_refused_and_nothing_of_the_job_is_written(store):
    def write(tx):
        tx.execute("SELECT 1")
        tx.append("log", ("id", "label"), [("1", "fine"), ("2", "not\x00fine")])
        tx.update("t", COLUMNS, ("a", 1, "changed", 2))

    with pytest.raises(ApiError) as raised:
        store.write(write)
    assert raised.value.code == ErrorCode.INVALID_ARGUMENT and "NUL" in raised.value.message
    assert store.read("SELECT count(*) FROM log").fetchall() == [(0,)]
    assert store.read("SELECT label, version FROM t").fetchall() == [("first", 1)]
