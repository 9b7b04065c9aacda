"""Benchmark: does the service-key lookup take the same time for a known and an unknown key?

A DuckDB file with ``--workspaces`` workspaces (default 2,000). Timed, interleaved, ``--n`` times
each (default 3,000): the right key and token, the right key with a wrong token, an unknown
key. For :class:`toolkit.services.workspaces.Authenticator` on its database path (one
lookups, each fetching a row whether or not the hash is stored; a new one per lookup, so
that no confirmed pair is remembered — a remembered pair skips the database, which only a
holder of that pair can observe — which also reads its two anchor hashes each time, where a
server reads them once per credential change) and, as the baseline in the same run, the lookup it replaced
(the key's row, then its tokens in a second statement only when the key exists, first
lookups of each pair; its cache of successful pairs is left out, since it answered known
pairs from memory, which is what made revocation wait for a restart).

Printed: the median and p90 of each case in microseconds and the ratios known ÷ unknown
(goal: within 1.1 for ours; the baseline's known key costs a second statement).

    .venv/bin/python benchmarks/auth_lookup.py [--workspaces 2000] [--n 3000]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolkit.errors import ApiError  # noqa: E402
from toolkit.services.workspaces import Authenticator, create_workspace  # noqa: E402
from toolkit.store import Store  # noqa: E402


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def previous_lookup(store: Store, api_key: str, auth_token: str) -> bool:
    """The lookup before issue 13: a second statement for the tokens of a known key."""
    key_hash, token_hash = _hash(api_key), _hash(auth_token)
    row = store.read(
        "SELECT workspace_id, label, dev, jwt_secret, advanced_queries FROM workspaces WHERE api_key_hash = ?",
        [key_hash],
    ).fetchone()
    tokens = (
        []
        if row is None
        else [
            t for (t,) in store.read("SELECT token_hash FROM auth_tokens WHERE workspace_id = ?", [row[0]]).fetchall()
        ]
    )
    matched = False
    for stored in tokens or ["0" * 64]:
        matched |= hmac.compare_digest(stored, token_hash)
    return row is not None and matched


def ours(store: Store):
    def lookup(key: str, token: str) -> bool:
        try:
            Authenticator(store).authenticate(key, token)  # a new one: the database path, nothing remembered
            return True
        except ApiError:
            return False

    return lookup


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspaces", type=int, default=2000)
    parser.add_argument("--n", type=int, default=3000)
    args = parser.parse_args(argv)
    db = Path(tempfile.mkdtemp(prefix="collab-auth-")) / "auth.duckdb"
    with Store(db) as store:
        creds = [create_workspace(store, f"w{i}", now_ms=0) for i in range(args.workspaces)]
        cases = {
            "known": lambda i: (creds[i % len(creds)].api_key, creds[i % len(creds)].auth_token),
            "wrong token": lambda i: (creds[i % len(creds)].api_key, f"at_wrong{i}"),
            "unknown key": lambda i: (f"ak_unknown{i}", creds[i % len(creds)].auth_token),
        }
        expected = {"known": True, "wrong token": False, "unknown key": False}
        for name, fn in (("ours", ours(store)), ("previous", lambda k, t: previous_lookup(store, k, t))):
            times = {case: [] for case in cases}
            for i in range(args.n):
                for case, make in cases.items():
                    key, token = make(i)
                    began = time.perf_counter()
                    answer = fn(key, token)
                    times[case].append(time.perf_counter() - began)
                    assert answer is expected[case], (name, case)
            medians = {case: statistics.median(t) * 1e6 for case, t in times.items()}
            p90 = {case: sorted(t)[int(0.9 * len(t))] * 1e6 for case, t in times.items()}
            print(
                f"{name:>8}: "
                + ", ".join(f"{case} {medians[case]:.0f} µs (p90 {p90[case]:.0f})" for case in cases)
                + f"; known / unknown key {medians['known'] / medians['unknown key']:.2f}x, "
                f"known / wrong token {medians['known'] / medians['wrong token']:.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
