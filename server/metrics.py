"""``GET /metrics`` (Prometheus text format) on the API's port, or on a port of its own
(``--metrics-port``); the metrics themselves are :mod:`toolkit.services.metrics`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from wsgiref.simple_server import WSGIServer

from prometheus_client import CONTENT_TYPE_LATEST, start_http_server
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from toolkit.services.metrics import Metrics


def metrics_endpoint(metrics: Metrics) -> Callable[[Request], Awaitable[Response]]:
    """``GET /metrics``: the database gauges are read on a worker thread."""

    async def endpoint(request: Request) -> Response:
        return Response(await run_in_threadpool(metrics.exposition), media_type=CONTENT_TYPE_LATEST)

    return endpoint


class MetricsListener:
    """The metrics served at (host, port) on a thread of their own, until :meth:`close`."""

    def __init__(self, metrics: Metrics, listen: tuple[str, int]) -> None:
        self.server: WSGIServer = start_http_server(listen[1], addr=listen[0], registry=metrics.registry)[0]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
