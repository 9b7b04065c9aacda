"""Benchmark: collaboration read queries on a large organization — the users half.

Workload (``users_paging``): one organization with ``--users`` members (default 50,000), added
through ``toolkit.services.access.add_users`` in batches of 1,000 (the request limit), in a
fresh temporary DuckDB *file* opened with ``toolkit.store.Store`` — in process, through the
service functions, with no HTTP in between (the HTTP envelope adds the same constant to every
endpoint; ``benchmarks/server_load.py`` measures that). A second workspace holds the same
number of users in an organization of the same name, so every query must filter by workspace.

Printed:
- p50 / p99 wall time of one get-users page (``pageSize`` 1000) at random positions of the list
  (``--samples`` pages, default 200), and of the first page; the CPU time of a page (all threads
  of the process: what a page costs, apart from waiting for a core on a busy machine);
- the total time to page through all users with ``pageToken`` (checked: every user exactly once);
- the time to add the users, per 1,000;
- a baseline measured in the same run, interleaved with the timed pages: a bare read of 1,000
  users' four fields (no filter, join or sort) through the same store, and the ratio page /
  baseline — steadier than absolute times on a shared machine.

Target: one page under 10 ms p50.

Workloads are separate functions registered in ``WORKLOADS`` (``--only NAME`` runs one); this
file holds the users workload (``users_paging``); the annotations half lives in
``benchmarks/collab_annotations.py``.

    .venv/bin/python benchmarks/collab_queries.py [--only users] [--users 50000] [--samples 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolkit.model import validate  # noqa: E402
from toolkit.model.access import AddUsers, GetUsers  # noqa: E402
from toolkit.services import access  # noqa: E402
from toolkit.services.access.users import _encode_token  # noqa: E402
from toolkit.services.context import Services  # noqa: E402
from toolkit.services.workspaces import Authenticator, create_workspace  # noqa: E402
from toolkit.store import Store  # noqa: E402

ORG = "acme"
BATCH = 1000
PAGE = 1000
TARGET_P50_MS = 10.0
BARE_SQL = "SELECT user_id, name, email, initial FROM users WHERE workspace_id = ? LIMIT 1000"


def _workspace(store: Store, now_ms: int):
    creds = create_workspace(store, "bench", now_ms=now_ms)
    return Authenticator(store).authenticate(creds.api_key, creds.auth_token)


def _populate(services: Services, workspace, users: int) -> float:
    """Add ``users`` users to ORG in batches; returns the seconds taken."""
    started = time.perf_counter()
    for start in range(0, users, BATCH):
        batch = [{"userId": f"user-{i:06d}", "name": f"User {i}", "email": f"user{i}@example.com",
                  "accessRole": "viewer" if i % 3 else "editor"} for i in range(start, min(users, start + BATCH))]
        access.add_users(services, workspace, validate(AddUsers, {"organizationId": ORG, "users": batch}))
    return time.perf_counter() - started


def _ms(seconds: list[float], q: float) -> float:
    ordered = sorted(seconds)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def users_paging(users: int = 50_000, samples: int = 200, seed: int = 7) -> dict:
    """Build the organization, time pages and a full scan; returns the measurements."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        try:
            services = Services(store)
            workspace = _workspace(store, services.clock.now())
            other = _workspace(store, services.clock.now())
            add_s = _populate(services, workspace, users)
            _populate(services, other, users)
            store.write(lambda tx: tx.execute("CHECKPOINT"))

            def page(token: str | None = None) -> dict:
                request = {"organizationId": ORG, "pageSize": PAGE}
                if token is not None:
                    request["pageToken"] = token
                return access.get_users(services, workspace, validate(GetUsers, request))

            for _ in range(5):  # warm caches and the query planner
                page()
            first = []
            for _ in range(max(20, samples // 4)):
                t = time.perf_counter()
                page()
                first.append(time.perf_counter() - t)
            # Random positions: a token as the service would have issued it after user seq n.
            seqs = [r[0] for r in store.read("SELECT seq FROM users WHERE workspace_id = ? ORDER BY seq",
                                             [workspace.workspace_id]).fetchall()]
            rng = random.Random(seed)
            anywhere, anywhere_cpu, bare = [], [], []
            for _ in range(samples):
                token = _encode_token("u", [rng.choice(seqs)])
                c, t = time.process_time(), time.perf_counter()
                page(token)
                anywhere.append(time.perf_counter() - t)
                anywhere_cpu.append(time.process_time() - c)
                # Baseline, interleaved so both see the same machine load: the bare read of
                # 1,000 users' four fields into Python tuples, with no filter, join or sort.
                t = time.perf_counter()
                store.read(BARE_SQL, [workspace.workspace_id])
                bare.append(time.perf_counter() - t)

            t = time.perf_counter()
            seen, token, pages = [], None, 0
            while True:
                result = page(token)
                pages += 1
                seen.extend(u["userId"] for u in result["data"])
                token = result["nextPageToken"]
                if token is None:
                    break
            scan_s = time.perf_counter() - t
            assert len(seen) == users and len(set(seen)) == users, "paging did not return everyone exactly once"
        finally:
            store.close()
    return {
        "users": users, "pages": pages, "add_s": add_s, "scan_s": scan_s,
        "first_p50_ms": _ms(first, 0.5), "first_p99_ms": _ms(first, 0.99),
        "page_p50_ms": _ms(anywhere, 0.5), "page_p99_ms": _ms(anywhere, 0.99),
        "page_mean_ms": statistics.fmean(anywhere) * 1000,
        "page_cpu_p50_ms": _ms(anywhere_cpu, 0.5),
        "bare_p50_ms": _ms(bare, 0.5), "bare_p99_ms": _ms(bare, 0.99),
    }


def report_users(r: dict) -> bool:
    print(f"users: {r['users']:,} in one organization (DuckDB file, in process through the service functions)")
    print(f"  add users           {r['add_s']:.2f} s ({r['add_s'] / r['users'] * BATCH * 1000:.1f} ms per {BATCH:,})")
    print(f"  get users, page 1   p50 {r['first_p50_ms']:.2f} ms   p99 {r['first_p99_ms']:.2f} ms")
    print(f"  get users, any page p50 {r['page_p50_ms']:.2f} ms   p99 {r['page_p99_ms']:.2f} ms"
          f"   (pageSize {PAGE}, random positions)")
    print(f"  get users, any page CPU p50 {r['page_cpu_p50_ms']:.2f} ms (all threads of this process: what the page"
          f" costs, without the waits of a busy machine)")
    print(f"  baseline            p50 {r['bare_p50_ms']:.2f} ms   p99 {r['bare_p99_ms']:.2f} ms"
          f"   (bare read of 1,000 users' fields, same store, interleaved)")
    print(f"  ratio page / baseline (p50): {r['page_p50_ms'] / r['bare_p50_ms']:.2f}")
    print(f"  page through all    {r['scan_s'] * 1000:.0f} ms for {r['pages']} pages, everyone exactly once")
    met = r["page_p50_ms"] < TARGET_P50_MS
    print(f"  target: one page under {TARGET_P50_MS:.0f} ms p50 -> {'met' if met else 'NOT met'}")
    return met


def run_users(args: argparse.Namespace) -> bool:
    return report_users(users_paging(args.users, args.samples))


# name -> function(args) -> bool (target met). Each workload is one function; another half
# (e.g. annotation counts) adds its own entry and options without touching the users half.
WORKLOADS = {"users": run_users}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(WORKLOADS), action="append",
                        help="run only this workload (repeatable); default: all")
    parser.add_argument("--users", type=int, default=50_000, help="users in the organization (users workload)")
    parser.add_argument("--samples", type=int, default=200, help="pages timed at random positions (users workload)")
    args = parser.parse_args(argv)
    for name in args.only or list(WORKLOADS):
        WORKLOADS[name](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
