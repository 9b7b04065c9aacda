"""Leases (toolkit.store.leases) on a real database of each backend: a key has one holder at a
time, however many claim it at once; a lease that ran out goes to the next claimant, and then
only the new holder can renew or give it back."""

from __future__ import annotations

import threading

import pytest

from toolkit.store import leases, open_store


@pytest.fixture(params=["duckdb", "postgres"])
def store(request, tmp_path):
    db = tmp_path / "leases.duckdb" if request.param == "duckdb" else request.getfixturevalue("postgres_dsn")
    with open_store(db) as opened:
        yield opened


def claim(store, keys, owner, now, until):
    return store.write(lambda tx: leases.claim(tx, leases.DELIVERY, keys, owner, now=now, until=until))


def test_racing_claimants_each_win_different_keys_and_together_all(store):
    keys = [f"ev{i}" for i in range(40)]
    won: dict[str, list[str]] = {}
    start = threading.Barrier(6)

    def claimant(owner: str) -> None:
        start.wait()
        won[owner] = claim(store, keys, owner, 1_000, 60_000)

    threads = [threading.Thread(target=claimant, args=(f"p{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    taken = [k for ks in won.values() for k in ks]
    assert sorted(taken) == sorted(keys), won  # every key once: no two holders, none left over


def test_a_lease_that_ran_out_goes_to_the_next_claimant_and_only_it_holds_it(store):
    assert claim(store, ["ev1"], "a", 0, 100) == ["ev1"]
    assert claim(store, ["ev1"], "b", 99, 200) == []  # still a's
    assert claim(store, ["ev1"], "a", 99, 150) == ["ev1"]  # a renews its own
    assert claim(store, ["ev1"], "b", 150, 250) == ["ev1"]  # ran out: b's now
    assert store.write(lambda tx: leases.renew(tx, leases.DELIVERY, ["ev1"], "a", 400)) == []
    assert store.write(lambda tx: leases.release(tx, leases.DELIVERY, ["ev1"], "a")) == []
    assert store.read("SELECT owner, lease_until FROM leases").fetchall() == [("b", 250)]
    assert store.write(lambda tx: leases.expire_all(tx, "b")) == 1
    assert leases.expired(store.read, leases.DELIVERY, 1) == ["ev1"]
    assert claim(store, ["ev1"], "c", 1, 300) == ["ev1"]  # given up: no wait
    assert store.write(lambda tx: leases.release(tx, leases.DELIVERY, ["ev1"], "c")) == ["ev1"]
    assert store.read("SELECT count(*) FROM leases").fetchone() == (0,)
