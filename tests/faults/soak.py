"""`make soak`: the fault harness for a long run (default 10 minutes), then the counts.

    .venv/bin/python tests/faults/soak.py [--seconds N] [--workers N] [--seed N] [--keep DIR]
                                          [--hostile [--poison-urls] [--maximal-predicates]]
                                          [--backend duckdb|postgres] [--processes N]

SOAK_SECONDS and SOAK_SEED set the defaults of --seconds and --seed (the seed is random when
neither is given, and printed), SOAK_BACKEND and SOAK_PROCESSES those of --backend and
--processes: on PostgreSQL (a throw-away server in a temporary directory) N processes serve
one database and each kill takes one of them while the others keep serving. Exit status 1
when anything was lost or duplicated or a check failed; the findings are printed, and the
database and server logs are kept for a look.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: api.support, processes, faults

from faults.harness import Config, Harness  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", 600)))
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", random.randrange(10**6))))
    parser.add_argument("--hostile", action="store_true", help="add the hostile tenant (faults.hostile)")
    parser.add_argument(
        "--poison-urls",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="… with unparseable webhook URLs (default on)",
    )
    parser.add_argument(
        "--maximal-predicates",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="… with the largest regex predicates the linter admits (default on)",
    )
    parser.add_argument("--backend", choices=("duckdb", "postgres"), default=os.environ.get("SOAK_BACKEND") or "duckdb")
    parser.add_argument("--processes", type=int, default=int(os.environ.get("SOAK_PROCESSES") or 1))
    parser.add_argument(
        "--keep", type=Path, help="directory for the database and server logs (default: a new temporary one)"
    )
    args = parser.parse_args(argv)
    if args.processes > 1 and args.backend != "postgres":
        parser.error("several processes need --backend postgres (a DuckDB file admits one)")
    root = args.keep or Path(tempfile.mkdtemp(prefix="collab-soak-"))
    print(
        f"soak: {args.seconds:.0f} s, {args.workers} workers, seed {args.seed}, {args.backend} with "
        f"{args.processes} process(es), files in {root}",
        flush=True,
    )
    started = time.strftime("%H:%M:%S")
    config = Config(
        root=root,
        seconds=args.seconds,
        workers=args.workers,
        seed=args.seed,
        load_s=(10.0, 40.0),
        hostile=args.hostile,
        poison_urls=args.poison_urls,
        maximal_predicates=args.maximal_predicates,
        backend=args.backend,
        processes=args.processes,
        progress=lambda line: print(f"[{time.strftime('%H:%M:%S')}] {line}", flush=True),
    )
    report = Harness(config).run()
    print(f"\nsoak from {started}, seed {args.seed}:")
    print(f"  requests sent:  {report.sent}")
    print(f"  acknowledged:   {report.acknowledged}")
    print(f"  kills survived: {report.kills}")
    print(f"  lost:           {len(report.lost)}")
    print(f"  duplicated:     {len(report.duplicated)}")
    if not report.ok:
        print(f"\n{report.failures(limit=50)}\n\nFAILED: the database and server logs are in {root}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
