"""What every service function needs: the store, a clock, an id source, the agent runner,
and the caches that keep the hot path off the database (plans and live execution states)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from toolkit.engine import AgentRunner, DefaultAgentRunner
from toolkit.services.quotas import ExecutionCounts, Quotas
from toolkit.services.runtime import SystemClock, SystemIds
from toolkit.store import AnyStore
from toolkit.webhook_urls import WebhookPolicy


@dataclass(frozen=True)
class CommitNotice:
    """What a commit tells :attr:`Services.listeners` (the server's timers, agent pool and
    webhook deliverer), called on the writer thread after the commit.

    An execution's commit names it (``execution_id``, its ``status``, the ``next_deadline``
    to fire, the background ``agent_requests`` it started, the event ids of the webhook
    ``deliveries`` it queued); a redrive of dead deliveries only sets ``redriven``."""

    workspace_id: str
    execution_id: str | None = None
    status: str | None = None
    next_deadline: int | None = None
    agent_requests: tuple = ()
    deliveries: tuple[str, ...] = ()
    redriven: bool = False


@dataclass
class Services:
    """The API, in process: ``toolkit.services.<area>.<function>(services, workspace, request)``."""

    store: AnyStore
    clock: Any = field(default_factory=SystemClock)
    ids: Any = field(default_factory=SystemIds)
    runner: AgentRunner = field(default_factory=DefaultAgentRunner)
    plans: dict = field(default_factory=dict)  # (workspace, definition, version) -> (Plan, view)
    # execution id -> (ExecutionState, version, workspace, webhook url): touched only by a job
    # holding the execution (DuckDB's writer; on PostgreSQL the job holding its row lock),
    # and checked against the stored version on a shared store
    states: dict = field(default_factory=dict)
    # execution id -> (workspace, definition, version): never changes, so kept in any process
    origins: dict = field(default_factory=dict)
    # (workspace, definition) -> current row: DuckDB's writer's; on a shared store a hint for rehearsals
    heads: dict = field(default_factory=dict)
    listeners: list = field(default_factory=list)  # callables(CommitNotice)
    quotas: Quotas = field(default_factory=Quotas)  # what one workspace may store
    stored: ExecutionCounts = field(default_factory=ExecutionCounts)  # executions stored per workspace
    lock: threading.Lock = field(default_factory=threading.Lock)
    webhook_policy: WebhookPolicy = field(default_factory=WebhookPolicy)  # where dispatch lets webhooks go
    # (tx, execution id, agent requests): called inside a command that starts background agent
    # runs, to lease them to this process in the same transaction (set on a shared store)
    lease_agent_runs: Any = None

    @property
    def runs_agents_inline(self) -> bool:
        """The default runner answers at once and purely, so its steps complete inside the
        command that started them; any other runner works in the background."""
        return type(self.runner) is DefaultAgentRunner

    def notify(self, notice: CommitNotice) -> None:
        """Tell every listener about a commit (on the writer thread, after the commit)."""
        for listener in self.listeners:
            listener(notice)
