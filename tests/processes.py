"""Helpers for tests that start real server processes (the API server, JupyterLab)."""

from __future__ import annotations

import socket
import subprocess
import time

import httpx


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_ready(
    proc: subprocess.Popen, url: str, timeout: float, *, headers: dict | None = None, interval: float = 0.05
) -> bool:
    """Poll ``url`` until it answers 200; False if ``proc`` exits or ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            if httpx.get(url, headers=headers, timeout=2).status_code == 200:
                return True
        except httpx.TransportError:
            pass
        time.sleep(interval)
    return False
