"""Running the app under uvicorn with a bounded, graceful stop.

On SIGTERM (or SIGINT) uvicorn stops accepting connections and lets the requests in flight
finish — for at most half of ``shutdown_timeout_s`` — then the app's lifespan drains: the
timer stops after its current tick, deliveries stop, the writer commits every queued job,
the database closes. The process then exits 0. Should all that take longer than
``shutdown_timeout_s`` in total, a watchdog ends the process with exit status 1 instead (a
stop that hangs must not keep an orchestrator waiting for ever; what is committed is safe,
as after a crash).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading

import uvicorn

from toolkit.services.serving import exit_overdue, settle_memory

log = logging.getLogger("collab.server")


class _Server(uvicorn.Server):
    """uvicorn's server, plus a watchdog armed by the first stop signal."""

    def __init__(self, config: uvicorn.Config, shutdown_timeout_s: float) -> None:
        super().__init__(config)
        self.shutdown_timeout_s = shutdown_timeout_s
        self.watchdog: threading.Timer | None = None

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets)
        settle_memory()  # the app has started: what it made lives as long as the process

    def handle_exit(self, sig, frame) -> None:
        if self.watchdog is None:
            log.info("stopping on signal %d (within %g s)", sig, self.shutdown_timeout_s)
            self.watchdog = threading.Timer(self.shutdown_timeout_s, exit_overdue, (self.shutdown_timeout_s,))
            self.watchdog.daemon = True
            self.watchdog.start()
        super().handle_exit(sig, frame)


def serve(app, *, host: str, port: int, log_level: str, shutdown_timeout_s: float, **uvicorn_options) -> int:
    """Serve ``app`` until a stop signal (``uvicorn_options``: more ``uvicorn.Config`` settings,
    e.g. the connection limits of :func:`server.protocol.uvicorn_options`). After a clean stop
    the process exits 0 here (without waiting for stray threads); otherwise the exit status to
    use is returned."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        log_config=None,
        access_log=False,
        # uvicorn's hint says int; it waits with asyncio, which takes a float
        timeout_graceful_shutdown=shutdown_timeout_s / 2,  # type: ignore[arg-type]
        **uvicorn_options,
    )
    server = _Server(config, shutdown_timeout_s)
    # uvicorn raises the stop signal again once it has stopped, to end the process the default
    # way (killed by the signal); a clean stop exits 0 instead, so ignore that second delivery.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    server.run()
    if not server.started or getattr(server.lifespan, "shutdown_failed", False):
        return 1  # could not bind, the app failed to start, or its stop failed (uvicorn logged why)
    # Threads still running (an agent run that ignored the stop) must not hold the exit.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
