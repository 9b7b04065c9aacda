"""The server app under uvicorn in the test process, over real HTTP on a free port: for tests
that need to reach inside the running server (block its writer, give it an agent runner)."""

from __future__ import annotations

import threading

import uvicorn
from processes import free_port

from api.support import wait_for
from server import Settings, create_app


class InProcess:
    """``create_app(settings)`` under uvicorn on a thread, on a free port."""

    def __init__(self, settings: Settings) -> None:
        self.app = create_app(settings)
        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(
                self.app, host="127.0.0.1", port=self.port, log_config=None, access_log=False, log_level="warning"
            )
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> InProcess:
        self.thread.start()
        wait_for(lambda: self.server.started, timeout=60, what="the in-process server")
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=60)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def writer(self):
        return self.app.state.services.store.writer
