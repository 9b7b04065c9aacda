"""A real HTTPS webhook receiver for the delivery tests: uvicorn in a thread, with a
certificate from a throw-away CA (trustme) that the server under test is told to trust.

It records every request (raw body and headers) and answers as ``respond(path, attempt)``
says: a status code, a Starlette ``Response`` (sent as is), or ``None`` to hold the request
open until :meth:`release`. Receivers may share one CA and hold certificates for other names.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trustme
import uvicorn
from processes import free_port
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


@dataclass(frozen=True)
class Received:
    path: str
    body: bytes
    headers: dict[str, str]
    status: int | None  # what we answered (None: the connection was cut while held)


class Receiver:
    def __init__(
        self,
        folder: Path,
        ca: trustme.CA | None = None,
        names: tuple[str, ...] = ("localhost", "127.0.0.1"),
    ) -> None:
        self.ca = ca or trustme.CA()
        cert = self.ca.issue_cert(*names)
        self.ca_path = folder / "receiver-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_path))
        self.cert_path = folder / f"receiver-{'-'.join(names)}.pem"
        cert.private_key_and_cert_chain_pem.write_to_path(str(self.cert_path))
        self.port = free_port()
        self.requests: list[Received] = []
        self.respond: Callable[[str, int], int | Response | None] = lambda path, attempt: 200
        self._lock = threading.Lock()
        self._released: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def url(self, path: str = "/hook", host: str = "localhost") -> str:
        return f"https://{host}:{self.port}{path}"

    async def _handle(self, request: Request) -> Response:
        body = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        status = self.respond(request.url.path, int(headers.get("x-service-attempt", "0")))
        if status is None:
            self._loop = asyncio.get_running_loop()
            released = self._released = self._released or asyncio.Event()
            with self._lock:
                self.requests.append(Received(request.url.path, body, headers, None))
            await released.wait()
            return Response(status_code=200)
        response = status if isinstance(status, Response) else Response(status_code=status)
        with self._lock:
            self.requests.append(Received(request.url.path, body, headers, response.status_code))
        return response

    def release(self) -> None:
        """Let held requests answer (if their connection is still open); later ones hold again."""
        released, self._released = self._released, None
        if self._loop is not None and released is not None:
            self._loop.call_soon_threadsafe(released.set)

    def start(self) -> Receiver:
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["POST"])])
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            ssl_keyfile=str(self.cert_path),
            ssl_certfile=str(self.cert_path),
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            assert time.monotonic() < deadline, "the webhook receiver did not start"
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.release()
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)

    def received(self, path: str | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if path is None or r.path == path]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 30.0, what: str = "deliveries") -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, f"timed out waiting for {what}; received: {self.received()}"
            time.sleep(0.05)
