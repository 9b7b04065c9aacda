"""Writer.exclusive: work on the writer thread between two commits, with no write in flight."""

from __future__ import annotations

import pytest

from toolkit.store import Store


def test_exclusive_work_sees_every_commit_before_it_and_holds_back_the_writes_after_it():
    store = Store(":memory:")
    store.write(lambda tx: tx.execute("CREATE TABLE t (n INTEGER)"))
    store.write(lambda tx: tx.execute("INSERT INTO t VALUES (1)"))
    held = []

    def work(con):
        later = store.writer.submit(lambda tx: tx.execute("INSERT INTO t VALUES (2)"))
        # the writer thread is running this function: the write just queued cannot have run
        held.append(later.done())
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (10)")
        con.execute("COMMIT")
        return con.execute("SELECT list(n ORDER BY n) FROM t").fetchall()[0][0], later

    seen, later = store.writer.exclusive(work)
    assert seen == [1, 10] and held == [False]
    later.result()
    assert store.read("SELECT list(n ORDER BY n) FROM t").fetchone()[0] == [1, 2, 10]
    store.close()


def test_a_failing_exclusive_job_reaches_its_caller_and_leaves_no_transaction_open():
    store = Store(":memory:")
    store.write(lambda tx: tx.execute("CREATE TABLE t (n INTEGER)"))

    def broken(con):
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("half-way")

    with pytest.raises(RuntimeError, match="half-way"):
        store.writer.exclusive(broken)
    store.write(lambda tx: tx.execute("INSERT INTO t VALUES (2)"))
    assert store.read("SELECT list(n) FROM t").fetchone()[0] == [2]
    store.close()
