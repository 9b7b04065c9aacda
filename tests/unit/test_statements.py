"""Parsed statements (toolkit.store.statements): one parse per text, then any parameters,
any cursor, any thread — with the same answers as the text itself."""

from __future__ import annotations

import threading

import pytest

from toolkit.store import Store
from toolkit.store.statements import parsed

SQL = "SELECT count(*), min(i) FROM range(100) t(i) WHERE i >= $low AND list_contains($odd::BIGINT[], i % 2)"


def test_a_text_is_parsed_once():
    assert parsed(SQL) is parsed(SQL)


@pytest.mark.parametrize("low, odd", [(0, [0, 1]), (10, [1]), (99, [0]), (100, [1])])
def test_answers_equal_the_texts(low, odd):
    with Store(":memory:") as store:
        params = {"low": low, "odd": odd}
        assert store.read(parsed(SQL), params).fetchall() == store.read(SQL, params).fetchall()


def test_every_thread_may_run_it_on_its_own_cursor():
    with Store(":memory:") as store:
        answers, errors = {}, []

        def run(low: int) -> None:
            try:
                answers[low] = store.read(parsed(SQL), {"low": low, "odd": [0, 1]}).fetchone()
            except Exception as exc:  # surfaced below: a thread's exception is otherwise lost
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(low,)) for low in range(0, 80, 10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and answers == {low: (100 - low, low) for low in range(0, 80, 10)}


def test_one_statement_only():
    with pytest.raises(ValueError):
        parsed("SELECT 1; SELECT 2")
