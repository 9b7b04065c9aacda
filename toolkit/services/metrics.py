"""Prometheus metrics (``collab serve --metrics``): request counts and latencies, webhook
attempts, database statement times, and gauges read from the database when scraped. The
server exposes them (:mod:`server.metrics`); here they are defined and counted.

Each app has its own :class:`~prometheus_client.CollectorRegistry` (never the process-wide
default), so two apps in one process — tests, say — count separately. Labels are route
templates, status codes and small fixed vocabularies: never ids, keys or user data, so the
number of series stays bounded whatever the traffic.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from toolkit.services.context import Services
from toolkit.services.gauges import gauges
from toolkit.services.webhooks.attempt_log import delivery_result
from toolkit.services.webhooks.deliverer import Deliverer
from toolkit.services.workflow.deliveries import Outcome

log = logging.getLogger("collab.metrics")

HTTP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
DB_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
EXECUTION_STATUSES = ("running", "completed", "failed", "cancelled")


class Metrics:
    """The app's metric families; :meth:`attach` adds the database gauges once the store is open."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "collab_http_requests",
            "HTTP requests answered, by route template and status",
            ("route", "status"),
            registry=r,
        )
        self.latency = Histogram(
            "collab_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer, by route template",
            ("route",),
            buckets=HTTP_BUCKETS,
            registry=r,
        )
        self.deliveries = Counter(
            "collab_deliveries",
            "Webhook delivery attempts, by result "
            "(delivered, failed: retried on the schedule, refused: dead-lettered at once)",
            ("result",),
            registry=r,
        )
        self.statements = Histogram(
            "collab_db_statement_seconds",
            "Database statement time, by kind (read, write, commit)",
            ("kind",),
            buckets=DB_BUCKETS,
            registry=r,
        )
        self._statement_kinds = {k: self.statements.labels(k) for k in ("read", "write", "commit")}
        for result in ("delivered", "failed", "refused"):
            self.deliveries.labels(result)  # every result is a series from the start, at 0

    def request(self, route: str, status: int, seconds: float) -> None:
        self.requests.labels(route, str(status)).inc()
        self.latency.labels(route).observe(seconds)

    def statement(self, kind: str, seconds: float) -> None:
        self._statement_kinds[kind].observe(seconds)

    def delivery(self, outcome: Outcome) -> None:
        self.deliveries.labels(delivery_result(outcome)).inc()

    def attach(self, services: Services, deliverer: Deliverer) -> None:
        """Count the store's statements and the webhook attempts, read the database gauges
        at scrape time."""
        services.store.observe_statements(self.statement)
        deliverer.observers.append(self.delivery)
        self.registry.register(DatabaseGauges(services))

    def exposition(self) -> bytes:
        """The text format (reads the database gauges: call it on a worker thread)."""
        return generate_latest(self.registry)


class DatabaseGauges(Collector):
    """Gauges computed when scraped, each from one cheap aggregate query (column scans of
    ``executions`` and ``outbox``; the waiting steps from running executions only)."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def collect(self) -> Iterator[GaugeMetricFamily]:
        store, now = self.services.store, self.services.clock.now()
        writer = getattr(store, "writer", None)
        if writer is not None and not store.shared:  # PostgreSQL has no writer queue
            yield GaugeMetricFamily(
                "collab_writer_queue_depth", "Write jobs queued for the single writer", writer.depth()
            )
        try:
            by_status, waiting, due, pending, oldest = gauges(self.services, now)
        except Exception:  # noqa: BLE001 - a scrape must not fail: the process metrics still count
            log.warning("could not read the database gauges", exc_info=True)
            return
        executions = GaugeMetricFamily("collab_executions", "Executions, by status", labels=("status",))
        for status in sorted(set(EXECUTION_STATUSES) | set(by_status)):
            executions.add_metric((status,), by_status.get(status, 0))
        yield executions
        yield GaugeMetricFamily("collab_steps_waiting", "Steps waiting for a person or an agent resolution", waiting)
        yield GaugeMetricFamily("collab_timers_due", "SLA deadlines and agent timeouts already due, not yet fired", due)
        yield GaugeMetricFamily(
            "collab_outbox_pending", "Webhook deliveries pending (due or waiting to retry)", pending
        )
        yield GaugeMetricFamily(
            "collab_outbox_oldest_pending_seconds",
            "Age of the oldest pending webhook delivery (0 when none)",
            max(0.0, (now - oldest) / 1000) if oldest is not None else 0.0,
        )
