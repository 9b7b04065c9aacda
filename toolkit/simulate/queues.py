"""Reviewer capacity: at most *k* waiting steps per reviewer at once, the rest first come,
first served — and the driver that simulates runs together because of it.

A reviewer's work item is (run, step). When the step starts waiting, the reviewer's decision
and latency are drawn at once from the run's generator (so the draws of a run do not depend on
other runs), but the latency only starts when the reviewer has a free slot; the item then
holds the slot until the reviewer decides or the step ends without them (a quorum, an SLA, the
execution's end). Queued items whose step ended while they waited are dropped.

Reviewers are shared by every run, so runs with capacity are not independent: they run on one
virtual clock, one heap, in :func:`run_coupled`. Ties in time are broken by the order in which
inputs were planned, and runs are dispatched in run order, so the result is still a pure
function of (definition, policy, script, seed, runs).
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Iterator

from toolkit.simulate.driver import Held, Run, RunLog


class Desks:
    """Per reviewer with a limit: ``capacity[r]`` slots, ``busy[r]`` taken, ``queue[r]``
    waiting items ``(run, step_id, command, latency, calendar)`` in arrival order."""

    __slots__ = ("capacity", "busy", "queue")

    def __init__(self, capacity: dict[str, int]) -> None:
        self.capacity = capacity
        self.busy = dict.fromkeys(capacity, 0)
        self.queue: dict[str, deque] = {r: deque() for r in capacity}

    def request(self, run: Run, reviewer: str, step_id: str, command, latency: int, calendar, now: int) -> None:
        """A waiting step asks the reviewer for a decision: start now if a slot is free, else queue."""
        if self.busy[reviewer] < self.capacity[reviewer]:
            self._start(run, reviewer, step_id, command, latency, calendar, now)
        else:
            self.queue[reviewer].append((run, step_id, command, latency, calendar))

    def _start(self, run: Run, reviewer: str, step_id: str, command, latency: int, calendar, now: int) -> None:
        self.busy[reviewer] += 1
        run.held.setdefault(step_id, []).append(reviewer)
        at = calendar.advance(now, latency, run.end) if calendar is not None else now + latency
        run.push(at, run, Held(reviewer, step_id, command), -1)

    def release(self, run: Run, step_id: str, reviewer: str, now: int) -> None:
        """The reviewer is done with (run, step) at ``now``: free the slot (once) and give it
        to the first queued item whose step still waits."""
        holders = run.held.get(step_id)
        if not holders or reviewer not in holders:
            return
        holders.remove(reviewer)
        if not holders:
            del run.held[step_id]
        self.busy[reviewer] -= 1
        queue = self.queue[reviewer]
        while queue and self.busy[reviewer] < self.capacity[reviewer]:
            waiting_run, waiting_step, command, latency, calendar = queue.popleft()
            state = waiting_run.state
            if state.status == "running" and state.steps[waiting_step].status == "waiting" and now <= waiting_run.end:
                self._start(waiting_run, reviewer, waiting_step, command, latency, calendar, now)


def run_coupled(
    plan,
    *,
    runs: range,
    start_of: Callable[[int], int],
    execution_id_of: Callable[[int], str],
    rng_of: Callable,
    behaviour,
    script=None,
    trigger_context: dict | None = None,
    horizon_ms: int,
) -> Iterator[tuple[int, RunLog]]:
    """Simulate ``runs`` together (reviewer capacity is shared) and yield ``(run, log)`` in run
    order, each as soon as it and every run before it have ended.

    A run ends when its execution ends (and, with a script, every action of the script has
    been tried), when its next input is past its horizon, or when nothing is left to happen."""
    heap: list = []
    order = itertools.count()

    def push(at: int, run, command, script_index: int) -> None:
        heapq.heappush(heap, (at, next(order), run, command, script_index))

    # Dispatches go on the heap first, so a dispatch precedes anything else planned for its instant.
    for k in runs:
        heapq.heappush(heap, (start_of(k), next(order), None, k, -1))
    desks = Desks(behaviour.capacity)
    live: dict[Run, int] = {}
    script_left: dict[Run, int] = {}
    finished: dict[int, RunLog] = {}
    next_out = runs.start

    def finish(run: Run, now: int) -> None:
        run.release_all(now)
        finished[live.pop(run)] = run.log()
        script_left.pop(run, None)

    while heap:
        at, _, run, command, script_index = heapq.heappop(heap)
        if run is None:
            run = Run(
                plan,
                execution_id=execution_id_of(command),
                start_ms=at,
                rng=rng_of(command),
                behaviour=behaviour,
                script=script,
                trigger_context=trigger_context,
                horizon_ms=horizon_ms,
                push=push,
                desks=desks,
            )
            live[run] = command
            if script is not None:
                script_left[run] = len(script.actions)
            run.start()
        elif run not in live:
            continue
        elif at > run.end:
            finish(run, at)
        else:
            if script_index >= 0:
                script_left[run] -= 1
            if run.state.status == "running" or script_index >= 0:
                run.handle(at, command, script_index)
        if run in live and run.state.status != "running" and not script_left.get(run):
            finish(run, at)
        while next_out in finished:
            yield next_out, finished.pop(next_out)
            next_out += 1
    for run in sorted(live, key=live.__getitem__):  # nothing left to happen to them: still running
        finish(run, run.clock.now())
    while next_out in finished:
        yield next_out, finished.pop(next_out)
        next_out += 1
