"""PostgreSQL for the benchmarks: a throw-away cluster (or a server you name), fresh databases
on it, and the CPU time its processes spend.

The cluster is the tests' ``PostgresCluster`` (tests/postgres.py) with one change: it is
durable. The tests turn ``fsync`` off because they never crash the machine; a benchmark that
compares PostgreSQL with DuckDB (whose commits flush its WAL to disk) must not. With
``--pg-url`` the benchmarks create their databases on that server instead (the role needs
CREATEDB) and drop them at the end; the CPU of its processes is then not measured (it may be
on another machine).

Not a benchmark itself: ``make bench`` runs it like the others and it prints what it is.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from postgres import PostgresCluster  # noqa: E402  (test support, on the path above)

SHARED_BUFFERS = "256MB"
TICK = os.sysconf("SC_CLK_TCK")


class DurableCluster(PostgresCluster):
    """The tests' cluster with fsync and full-page writes on, as a production server runs."""

    def _options(self) -> str:
        return f"-p {self.port} -h 127.0.0.1 -k {self.root} -c max_connections=200 -c shared_buffers={SHARED_BUFFERS}"


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _ns_on_cpu(pid: int) -> int:
    """Nanoseconds ``pid`` has run (/proc/<pid>/schedstat: exact, where /proc/<pid>/stat
    counts 10 ms ticks, too coarse for one request)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return 0


class Postgres:
    """Where the benchmarks' databases live: ``Postgres(None)`` starts a cluster,
    ``Postgres(url)`` uses a running server. ``database(label)`` makes a fresh one."""

    def __init__(self, url: str | None = None) -> None:
        self.cluster = None if url else DurableCluster.start()
        self.url = url or self.cluster.dsn()
        self.created: list[str] = []
        self.postmaster = int((self.cluster.data / "postmaster.pid").read_text().split()[0]) if self.cluster else None

    def database(self, label: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"collab_bench_{os.getpid()}_{label}"
        with psycopg.connect(self.url, autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        self.created.append(name)
        return urlsplit(self.url)._replace(path=f"/{name}").geturl()

    def pids(self) -> list[int]:
        """The cluster's processes: the postmaster and its children (empty with ``--pg-url``)."""
        if self.postmaster is None:
            return []
        children = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    if int(_stat(int(entry.name))[1]) == self.postmaster:
                        children.append(int(entry.name))
                except (OSError, IndexError, ValueError):
                    continue
        return [self.postmaster, *children]

    def cpu_seconds(self) -> float | None:
        """CPU seconds the cluster has used so far, for a window of seconds: the live processes
        plus what the postmaster collected from children that ended (a pooled connection
        closed mid-window still counts). None when the server is not ours to look at."""
        if self.postmaster is None:
            return None
        ticks = 0
        for pid in self.pids():
            try:
                fields = _stat(pid)
            except OSError:
                continue
            ticks += int(fields[11]) + int(fields[12])
            if pid == self.postmaster:
                ticks += int(fields[13]) + int(fields[14])
        return ticks / TICK

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            return
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as con:
            for name in self.created:
                con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def __enter__(self) -> Postgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ProcessMeter:
    """Exact CPU time of a fixed set of single-threaded processes (a pool's backends), read
    before and after one request."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids

    def ns(self) -> int:
        return sum(_ns_on_cpu(pid) for pid in self.pids)


if __name__ == "__main__":
    print(__doc__.split("\n\n")[0])
