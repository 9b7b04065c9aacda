"""Benchmark: does a request cost more as the database grows? On DuckDB and on PostgreSQL.

Single requests, one after another, through the service functions the HTTP routes call
(`LocalClient` over the store ``--db`` would open, no network: what is measured is the store),
on an empty database and on one holding ``--executions`` (default 1,000,000) waiting
executions of ``parallel-review`` with their events and command log. The filler copies one
real dispatched execution's rows with new ids in bulk, as fast as each store allows, not
through the engine: on DuckDB with ``INSERT … SELECT`` over ``range(n)``, on PostgreSQL with
``COPY … FROM STDIN`` (the template's rows as COPY wrote them, new ids spliced in), then
``CHECKPOINT`` / ``VACUUM ANALYZE``, as a database that has been running a while would be.

PostgreSQL is a durable cluster this benchmark starts in a temporary directory
(benchmarks/pg_bench.py), or the server ``--pg-url`` names (it creates and drops its two
databases there).

Measured, p50 over ``--repeat`` fresh executions each: dispatch, get, a reviewer decision,
getEvents, and the first page of list (50). Printed per backend: p50 wall time and p50 CPU
time on the empty and the full database and the ratio full ÷ empty per request (target
within 1.5x), the fill's time and size, and the load average. CPU is this process's (all its
threads: DuckDB's included) plus, on PostgreSQL, that of the cluster's processes (exact, from
/proc/<pid>/schedstat): the steadier figure on a shared machine. The baseline (the empty
database) is measured in the same run, in rounds alternating with the full one.

    .venv/bin/python benchmarks/server_growth.py [--backend duckdb|postgres|both] \
        [--executions 1000000] [--repeat 200] [--pg-url postgresql://…]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pg_bench import Postgres, ProcessMeter  # noqa: E402

from toolkit import examples  # noqa: E402
from toolkit.client import LocalClient  # noqa: E402
from toolkit.services.context import Services  # noqa: E402
from toolkit.services.quotas import Quotas  # noqa: E402
from toolkit.services.workspaces import Authenticator, create_workspace  # noqa: E402
from toolkit.store.open import open_store  # noqa: E402

DEFINITION = "parallel-review"
TARGET = 1.5
KINDS = ("dispatch", "get", "decision", "getEvents", "list")
COPY_BATCH = 20_000  # rows per write to COPY's stream


def open_client(db: str, credentials=None, stored: int = 0) -> LocalClient:
    """A client on a newly opened store, as a server would start on ``db``: caches empty.
    Without ``credentials`` it makes the workspace (``client.credentials``). The workspace's
    execution quota is raised above ``stored``, as its operator would have (the default, a
    million, would refuse the full database's dispatches); the quota is still checked."""
    store = open_store(db)
    default = Quotas()
    quotas = Quotas(max_definitions=default.max_definitions, max_executions=max(default.max_executions, 2 * stored))
    services = Services(store, quotas=quotas)
    if credentials is None:
        credentials = create_workspace(store, "bench", now_ms=services.clock.now())
    client = LocalClient(services, Authenticator(store).authenticate(credentials.api_key, credentials.auth_token))
    client.credentials = credentials
    client._owned_store = store
    return client


def new_id(i: int) -> str:
    """The filler's execution ids: the shape of real ones (random hex), never one of them."""
    return "ex_" + hashlib.md5(str(i).encode()).hexdigest()[:20]  # noqa: S324 - spreads keys, not secrecy


# ---------------------------------------------------------------------------- filling


def fill_duckdb(client: LocalClient, template: str, n: int) -> None:
    """``n`` copies of one waiting execution (rows of executions, events, commands), new ids."""
    ws = client.workspace.workspace_id

    def copy(tx):
        params = [template, ws]
        ids = "'ex_' || substr(md5(i::VARCHAR), 1, 20)"
        tx.execute(
            f"""INSERT INTO executions BY NAME
            SELECT x.* REPLACE ({ids} AS execution_id, NULL AS idempotency_key, x.list_key + i + 1 AS list_key)
            FROM executions x, range(?) r(i) WHERE x.execution_id = ? AND x.workspace_id = ?""",
            [n] + params,
        )
        tx.execute(
            f"""INSERT INTO events BY NAME
            SELECT e.* REPLACE ({ids} AS execution_id, e.event_id || '_' || i AS event_id)
            FROM events e, range(?) r(i) WHERE e.execution_id = ? AND e.workspace_id = ?""",
            [n] + params,
        )
        tx.execute(
            f"""INSERT INTO commands BY NAME
            SELECT c.* REPLACE ({ids} AS execution_id)
            FROM commands c, range(?) r(i) WHERE c.execution_id = ? AND c.workspace_id = ?""",
            [n] + params,
        )

    client.services.store.write(copy)
    client.services.store.write(lambda tx: tx.execute("CHECKPOINT"))


def _template(cur, table: str, execution_id: str) -> tuple[list[str], list[list[bytes]]]:
    """``table``'s columns and the execution's rows in COPY's text format, split into fields
    (what COPY wrote, COPY reads back: no escaping of our own). ``txid`` is left out: its
    default stamps the fill's own transaction, as on any insert."""
    from psycopg import sql

    cur.execute(sql.SQL("SELECT * FROM {} LIMIT 0").format(sql.Identifier(table)))
    columns = [d.name for d in cur.description if d.name != "txid"]
    query = sql.SQL("COPY (SELECT {} FROM {} WHERE execution_id = {}) TO STDOUT").format(
        sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Identifier(table), sql.Literal(execution_id)
    )
    with cur.copy(query) as copy:
        text = b"".join(bytes(block) for block in copy)
    return columns, [line.split(b"\t") for line in text.splitlines()]


def fill_postgres(url: str, template: str, n: int) -> None:
    """The same copies as :func:`fill_duckdb`, streamed through ``COPY … FROM STDIN``."""
    import psycopg

    tables = ["executions", "events", "commands"]
    with psycopg.connect(url) as con, con.cursor() as cur:
        base = cur.execute("SELECT max(list_key) FROM executions").fetchone()[0]
        # Building an index once over sorted rows is far cheaper than inserting millions of
        # random keys into it: the secondary indexes go for the load and come back after, in
        # the same transaction (the primary keys stay, so an id clash would still fail).
        indexes = cur.execute(
            """SELECT indexname, indexdef FROM pg_indexes
            WHERE schemaname = current_schema() AND tablename = ANY(%s)
              AND indexname NOT IN (SELECT conname FROM pg_constraint)""",
            [tables],
        ).fetchall()
        for name, _ in indexes:
            cur.execute(f'DROP INDEX "{name}"')
        for table in tables:
            columns, rows = _template(cur, table, template)
            eid_at = columns.index("execution_id")
            event_at = columns.index("event_id") if table == "events" else None
            with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                chunk: list[bytes] = []
                for i in range(n):
                    eid = new_id(i).encode()
                    for row in rows:
                        fields = list(row)
                        fields[eid_at] = eid
                        if event_at is not None:
                            fields[event_at] = row[event_at] + b"_%d" % i
                        elif table == "executions":
                            fields[columns.index("idempotency_key")] = rb"\N"
                            fields[columns.index("list_key")] = b"%d" % (base + i + 1)
                        chunk.append(b"\t".join(fields))
                    if len(chunk) >= COPY_BATCH:
                        copy.write(b"\n".join(chunk) + b"\n")
                        chunk.clear()
                if chunk:
                    copy.write(b"\n".join(chunk) + b"\n")
        cur.execute("SET maintenance_work_mem = '256MB'")
        for _, definition in indexes:
            cur.execute(definition)
        # New executions take list keys after the fill's, as they would after real traffic.
        cur.execute("SELECT setval('list_keys', greatest((SELECT last_value FROM list_keys), %s))", [base + n])
        con.commit()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("VACUUM ANALYZE")
        con.execute("CHECKPOINT")


def database_size(backend: str, db: str) -> int:
    if backend == "duckdb":
        return Path(db).stat().st_size
    import psycopg

    with psycopg.connect(db) as con:
        return con.execute("SELECT pg_database_size(current_database())").fetchone()[0]


# ---------------------------------------------------------------------------- measuring


class Sampler:
    """Wall and CPU milliseconds per request kind. CPU is this process's (DuckDB's threads
    included) plus, where the database is other processes, theirs."""

    def __init__(self, database_pids: list[int]) -> None:
        self.database = ProcessMeter(database_pids)
        self.samples: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in KINDS}

    def timed(self, kind: str, fn):
        db_ns, cpu = self.database.ns(), time.process_time()
        start = time.perf_counter()
        result = fn()
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu + (self.database.ns() - db_ns) / 1e9
        self.samples[kind][0].append(wall * 1000)
        self.samples[kind][1].append(cpu * 1000)
        return result

    def p50(self) -> dict[str, tuple[float, float]]:
        return {k: (statistics.median(w), statistics.median(c)) for k, (w, c) in self.samples.items()}


def measure(client: LocalClient, repeat: int, sampler: Sampler) -> None:
    """``repeat`` fresh executions, each taken through the five requests."""
    timed = sampler.timed
    for _ in range(repeat):
        eid = timed("dispatch", lambda: client.dispatch(DEFINITION))["executionId"]
        steps = timed("get", partial(client.get_execution, eid))["steps"]
        legal = next(s for s in steps if s["nodeId"] == "legal-review")
        decide = partial(
            client.record_reviewer_decision, eid, legal["stepId"], reviewerId="alice@legal", decision="approve"
        )
        if not timed("decision", decide)["recorded"]:
            raise SystemExit(f"the decision on {eid} was not recorded")
        if not timed("getEvents", partial(client.get_events, eid))["events"]:
            raise SystemExit(f"getEvents of {eid} returned nothing")
        timed("list", lambda: client.list_executions(pageSize=50))


def prepare(backend: str, label: str, n: int, tmp: Path, postgres: Postgres | None) -> tuple[str, object]:
    """A database holding ``n`` filler executions (and the definition); its name and the
    workspace's credentials."""
    db = str(tmp / f"{label}.duckdb") if backend == "duckdb" else postgres.database(label)
    with open_client(db) as client:
        client.create_definition(examples.load(DEFINITION))
        credentials = client.credentials
        if n:
            start = time.perf_counter()
            template = client.dispatch(DEFINITION)["executionId"]
            if backend == "duckdb":
                fill_duckdb(client, template, n)
    if n and backend == "postgres":
        fill_postgres(db, template, n)
    if n:
        print(
            f"{backend}: filled {n:,} executions in {time.perf_counter() - start:.1f} s "
            f"({database_size(backend, db) / 2**20:,.0f} MiB)",
            flush=True,
        )
    return db, credentials


def run_backend(backend: str, executions: int, repeat: int, pg_url: str | None) -> float:
    """Measure one backend; print its table; the worst full ÷ empty ratio (CPU)."""
    with tempfile.TemporaryDirectory(prefix="collab-growth-") as tmp, contextlib.ExitStack() as stack:
        postgres = stack.enter_context(Postgres(pg_url)) if backend == "postgres" else None
        clients, samplers = {}, {}
        for label, n in (("empty", 0), ("full", executions)):
            db, credentials = prepare(backend, label, n, Path(tmp), postgres)
            clients[label] = stack.enter_context(open_client(db, credentials, n))
            measure(clients[label], max(5, repeat // 10), Sampler([]))  # warm caches and statement plans
        # The pool's connections exist now; their backends are what a request costs the database.
        pids = postgres.pids() if postgres else []
        samplers = {label: Sampler(pids) for label in clients}
        # Alternating rounds, so that a change in the machine's load falls on both sides.
        for _ in range(10):
            for label, client in clients.items():
                measure(client, max(1, repeat // 10), samplers[label])
        results = {label: sampler.p50() for label, sampler in samplers.items()}
    where = "this process" + (" + PostgreSQL's processes" if pids else "")
    print(
        f"\n{backend}, {executions:,} executions, p50 of {repeat} requests each; CPU = {where}\n"
        f"{'request':<10} {'empty p50':>10} {'full p50':>10} {'ratio':>6}   "
        f"{'empty CPU':>10} {'full CPU':>10} {'ratio':>6}"
    )
    worst = worst_cpu = 0.0
    for kind in KINDS:
        (e, e_cpu), (f, f_cpu) = results["empty"][kind], results["full"][kind]
        worst, worst_cpu = max(worst, f / e), max(worst_cpu, f_cpu / e_cpu)
        print(
            f"{kind:<10} {e:>8.2f}ms {f:>8.2f}ms {f / e:>5.2f}x   "
            f"{e_cpu:>8.2f}ms {f_cpu:>8.2f}ms {f_cpu / e_cpu:>5.2f}x"
        )
    verdict = "met" if worst_cpu <= TARGET else "NOT met"
    print(
        f"{backend}: worst ratio {worst:.2f}x wall, {worst_cpu:.2f}x CPU (target within {TARGET}x of empty: "
        f"{verdict} on CPU); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n",
        flush=True,
    )
    return worst_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("duckdb", "postgres", "both"), default="both")
    parser.add_argument("--executions", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument(
        "--pg-url", help="a PostgreSQL server to create the two databases on (default: start a cluster)"
    )
    args = parser.parse_args()
    backends = ("duckdb", "postgres") if args.backend == "both" else (args.backend,)
    worst = {b: run_backend(b, args.executions, args.repeat, args.pg_url) for b in backends}
    print("worst full ÷ empty CPU ratio: " + ", ".join(f"{b} {r:.2f}x" for b, r in worst.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
