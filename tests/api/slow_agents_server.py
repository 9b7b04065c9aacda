"""`collab serve` with an agent runner that takes its time, for the tests of background agent
runs across processes (`collab serve` itself only has the default runner, which answers at
once and inline). Each run appends "<pid> <step id>" to ``--runs`` when it
starts, then sleeps ``--delay`` seconds and approves.

    python tests/api/slow_agents_server.py --db URL --port P --runs FILE [--delay S] [--lease-seconds S]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from server import Settings, create_app
from server.shutdown import serve
from toolkit.engine import DefaultAgentRunner


class SlowRunner(DefaultAgentRunner):
    def __init__(self, delay_s: float, runs: str) -> None:
        self.delay_s, self.runs = delay_s, runs

    def run(self, request):
        with open(self.runs, "a") as log:
            log.write(f"{os.getpid()} {request.step_id}\n")
        time.sleep(self.delay_s)
        return super().run(request)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--db", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--runs", required=True)
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--lease-seconds", type=float, default=30.0)
    args = p.parse_args()
    settings = Settings(
        db=args.db, agent_runner=SlowRunner(args.delay, args.runs), mirror_every_s=None, lease_s=args.lease_seconds
    )
    return serve(create_app(settings), host="127.0.0.1", port=args.port, log_level="warning", shutdown_timeout_s=10)


if __name__ == "__main__":
    sys.exit(main())
