"""A real PostgreSQL server for the tests, started in a temporary directory.

Debian's `postgresql` package puts its programs in /usr/lib/postgresql/<major>/bin, off the
PATH; `make postgresql` installs the package when it is missing. PostgreSQL refuses to run as
root, so when the tests run as root the cluster belongs to the `postgres` system user the
package creates (or `nobody`), and its files live in a directory that user owns.

``fsync`` is off: the tests kill PostgreSQL's processes (``pg_ctl restart -m immediate``), never
the machine, so what reached the operating system survives, and every run skips thousands of
disk flushes. ``synchronous_commit`` stays on, so an acknowledged commit is in the WAL.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from processes import free_port

SKIP_ENV = "COLLAB_SKIP_POSTGRES"


def postgres_bindir() -> Path | None:
    """The newest installed PostgreSQL's program directory, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _run_as() -> str | None:
    """The unprivileged user the cluster runs as when we are root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root, but there is no 'postgres' or 'nobody' user to run PostgreSQL as")


@dataclass
class PostgresCluster:
    """``initdb`` + ``pg_ctl start`` on a free port of 127.0.0.1; ``dsn(db)`` for each database."""

    root: Path
    bindir: Path
    port: int
    user: str | None

    @classmethod
    def start(cls, root: Path | None = None) -> PostgresCluster:
        bindir = postgres_bindir()
        if bindir is None:
            raise RuntimeError(
                "PostgreSQL is not installed: run `make postgresql` (Debian's postgresql "
                f"package), or set {SKIP_ENV}=1 to skip the PostgreSQL tests"
            )
        root = Path(root or tempfile.mkdtemp(prefix="collab-pg-"))
        cluster = cls(root=root, bindir=bindir, port=free_port(), user=_run_as())
        cluster._init()
        log = root / "server.log"
        for attempt in range(3):
            seen = log.stat().st_size if log.exists() else 0
            try:
                cluster.pg_ctl("start", "-w", "-t", "60", "-l", str(log), "-o", cluster._options())
                break
            except RuntimeError:
                # The probed port can be taken before the postmaster binds it (initdb takes a
                # second or two, and other test processes open connections meanwhile): retry.
                taken = log.exists() and b"Address already in use" in log.read_bytes()[seen:]
                if attempt == 2 or not taken:
                    raise
                cluster.port = free_port()
        return cluster

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _options(self) -> str:
        return (
            f"-p {self.port} -h 127.0.0.1 -k {self.root} -c fsync=off -c full_page_writes=off "
            "-c max_connections=200 -c shared_buffers=128MB"
        )

    def _init(self) -> None:
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "collab",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--locale",
            "C",
        )

    def _run(self, *argv: str) -> subprocess.CompletedProcess:
        result = subprocess.run(list(argv), cwd=self.root, user=self.user, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(
                f"{Path(argv[0]).name} failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}"
            )
        return result

    def pg_ctl(self, *args: str) -> None:
        """``pg_ctl -D <data> <args>`` as the cluster's user (e.g. ``restart -m immediate``)."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), *args)

    def restart(self, mode: str = "immediate") -> None:
        self.pg_ctl("restart", "-m", mode, "-w", "-t", "60", "-l", str(self.root / "server.log"), "-o", self._options())

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://collab@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; its DSN."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def stop(self) -> None:
        try:
            self.pg_ctl("stop", "-m", "fast", "-w", "-t", "60")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
