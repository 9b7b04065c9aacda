"""What the harness runs: load operations and checks, each one function registered here.

A family module (workflow, access, content, agents, audit, …) registers its operations with
``@operation(weight)`` and its checks with ``@check(...)`` when it is imported; the harness
imports every module of :data:`FAMILIES`. Adding a check — say "outbox deliveries resumed" —
is one decorated function in one of them (or a new module named in :data:`FAMILIES`)::

    @check("online")
    def outbox_deliveries_resumed(ctx):
        for item in ctx.read("/v2/…", {...})["items"]:
            if …:
                ctx.report.problem(f"delivery {item['id']} never resumed")

An operation is ``fn(ctx)`` (``ctx`` is a :class:`faults.context.Ctx` of one load worker): it
sends a few requests through ``ctx.read`` / ``ctx.write`` and records what each acknowledged
write promised in ``ctx.ledger``. A check is ``fn(ctx)`` too; ``offline`` checks run while the
server is down (``ctx.db`` is the database file, open it read-only), ``online`` checks after
the restart, with the load paused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

FAMILIES = (
    "faults.workflow_load",
    "faults.workflow_checks",
    "faults.access",
    "faults.content",
    "faults.agents",
    "faults.audit",
    "faults.webhooks",
)


class Operation(NamedTuple):
    name: str
    weight: float
    fn: Callable


class Check(NamedTuple):
    name: str
    phase: str  # "offline" (server down, database file readable) or "online" (after the restart)
    fn: Callable


OPERATIONS: list[Operation] = []
CHECKS: list[Check] = []


def operation(weight: float):
    """Register ``fn(ctx)`` as a load operation, picked with probability proportional to ``weight``."""

    def register(fn):
        OPERATIONS.append(Operation(fn.__name__, weight, fn))
        return fn

    return register


def check(phase: str):
    """Register ``fn(ctx)`` to run after every kill: ``offline`` before the restart, ``online`` after."""
    if phase not in ("offline", "online"):
        raise ValueError(f"phase must be 'offline' or 'online', not {phase!r}")

    def register(fn):
        CHECKS.append(Check(fn.__name__, phase, fn))
        return fn

    return register
