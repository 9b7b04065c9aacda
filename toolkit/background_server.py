"""``collab serve`` as a child process of a notebook or a script, ready to call.

What notebooks 03 and 04 need before their first HTTP call — a workspace, a free port, a
server that answers, and a way to stop it all — in one call::

    from toolkit.client import serve_in_background

    with serve_in_background() as server:          # a throw-away database in a temp folder
        client = server.client()                   # an HttpClient with the workspace's credentials
        client.create_definition(...)

The workspace is created (``collab workspace create --json``) before the server starts,
because DuckDB lets one process at a time open a database file for writing. The server's
output goes to ``server.log_path``. :meth:`BackgroundServer.stop` is registered with
``atexit``, so a kernel that exits stops its server too.
"""

from __future__ import annotations

import atexit
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["BackgroundServer", "serve_in_background"]

_COLLAB = [sys.executable, "-m", "toolkit.cli"]  # this interpreter's toolkit, whatever PATH says


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class BackgroundServer:
    """A running ``collab serve``: :attr:`url`, :attr:`port`, :attr:`db`, :attr:`credentials`
    (``{"apiKey", "authToken"}`` of the workspace it created, or None), :meth:`client`,
    :meth:`stop`. A context manager: leaving the ``with`` block stops it."""

    def __init__(
        self,
        db: Path,
        port: int,
        process: subprocess.Popen,
        log_path: Path,
        credentials: dict | None,
        owned_dir: Path | None,
    ):
        self.db = db
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.process = process
        self.log_path = log_path
        self.credentials = credentials
        self._owned_dir = owned_dir  # the temp folder of a throw-away database, removed by stop()
        self.exit_code: int | None = None
        atexit.register(self.stop)

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def client(self, api_key: str | None = None, auth_token: str | None = None, **options):
        """An :class:`~toolkit.client.HttpClient` on this server, with the given credentials
        or those of the workspace :func:`serve_in_background` created."""
        from toolkit.client import HttpClient

        if api_key is None and auth_token is None:
            if self.credentials is None:
                raise ValueError("this server was started without creating a workspace: pass api_key and auth_token")
            api_key, auth_token = self.credentials["apiKey"], self.credentials["authToken"]
        if api_key is None or auth_token is None:
            raise TypeError("pass both api_key and auth_token, or neither")
        return HttpClient(self.url, api_key, auth_token, **options)

    def log(self) -> str:
        """What the server printed so far (the last 6,000 characters)."""
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def stop(self, timeout: float = 30) -> int | None:
        """Stop the server (SIGTERM: it finishes its work and closes the database; SIGKILL
        after ``timeout`` seconds) and remove a throw-away database's folder. Returns the
        exit status; calling it again does nothing."""
        atexit.unregister(self.stop)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
        self.exit_code = self.process.returncode
        if self._owned_dir is not None:
            shutil.rmtree(self._owned_dir, ignore_errors=True)
            self._owned_dir = None
        return self.exit_code

    def __enter__(self) -> BackgroundServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<BackgroundServer {self.url} {'running' if self.running else 'stopped'}>"


def serve_in_background(
    db: str | Path | None = None,
    port: int | None = None,
    *,
    workspace: bool = True,
    args: tuple[str, ...] = (),
    timeout: float = 60,
) -> BackgroundServer:
    """Start ``collab serve`` on 127.0.0.1 as a subprocess and wait until it answers.

    ``db``: the database file (created if missing); None uses a new temporary folder, removed
    when the server stops. ``port``: None picks a free one. ``workspace``: create a workspace
    first (its credentials in ``.credentials``; ``.client()`` uses them). ``args``: more
    ``collab serve`` options. Raises RuntimeError with the server's output if it does not
    start within ``timeout`` seconds.
    """
    owned_dir = None
    if db is None:
        owned_dir = Path(tempfile.mkdtemp(prefix="collab-server-"))
        db = owned_dir / "collab.duckdb"
    db = Path(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    log_path = db.parent / f"{db.stem}.server.log"
    try:
        credentials = None
        if workspace:
            created = subprocess.run(
                [*_COLLAB, "workspace", "create", "--db", str(db), "--label", "notebook", "--json"],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            if created.returncode != 0:
                raise RuntimeError(f"collab workspace create failed: {created.stderr.strip()}")
            credentials = json.loads(created.stdout)
        # a free port can be taken between the probe and the server's bind: try again then
        for _attempt in range(1 if port is not None else 3):
            chosen = port if port is not None else _free_port()
            with open(log_path, "ab") as log:
                process = subprocess.Popen(
                    [
                        *_COLLAB,
                        "serve",
                        "--db",
                        str(db),
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(chosen),
                        "--log-level",
                        "warning",
                        *args,
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            if _wait_ready(process, f"http://127.0.0.1:{chosen}/healthz", timeout):
                return BackgroundServer(db, chosen, process, log_path, credentials, owned_dir)
            if process.poll() is None:
                process.kill()
            process.wait()
        output = log_path.read_text(errors="replace")[-4000:] if log_path.exists() else ""
        raise RuntimeError(f"collab serve did not start on 127.0.0.1; its output:\n{output}")
    except BaseException:
        if owned_dir is not None:
            shutil.rmtree(owned_dir, ignore_errors=True)
        raise


def _wait_ready(process: subprocess.Popen, url: str, timeout: float) -> bool:
    """Poll ``url`` until it answers 200; False when the process exits or time runs out."""
    import httpx  # the `server` extra, which `collab serve` needs anyway

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return True
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    return False
