"""toolkit.os_random: the ids of requests, executions, steps, comments and activities come from
the operating system's generator, a block at a time, and none is ever handed out twice: not
to two threads, not across a block's end, not to a parent and the child it forked."""

from __future__ import annotations

import multiprocessing
import threading

from toolkit import os_random
from toolkit.os_random import token_hex


def test_threads_drawing_at_once_never_get_the_same_id_even_across_blocks():
    per_thread, threads = 400, 8  # 8 × 400 × 10 bytes: about eight blocks of 4 KiB
    drawn: list[list[str]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads)

    def draw(out: list[str]) -> None:
        start.wait()
        out.extend(token_hex(10) for _ in range(per_thread))

    workers = [threading.Thread(target=draw, args=(out,)) for out in drawn]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    ids = [i for out in drawn for i in out]
    assert len(set(ids)) == len(ids) == per_thread * threads
    assert {len(i) for i in ids} == {20} and all(int(i, 16) >= 0 for i in ids)


def test_a_draw_larger_than_a_block_is_served_whole():
    assert len(token_hex(os_random.BLOCK + 1)) == 2 * (os_random.BLOCK + 1)


def _child(conn) -> None:
    conn.send([token_hex(16) for _ in range(50)])
    conn.close()


def test_a_forked_child_does_not_repeat_its_parents_ids():
    token_hex(16)  # the parent now holds a block with most of it still to hand out
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe()
    child = ctx.Process(target=_child, args=(theirs,))
    child.start()
    childs = ours.recv()
    child.join(10)
    parents = [token_hex(16) for _ in range(50)]
    assert not set(childs) & set(parents)
