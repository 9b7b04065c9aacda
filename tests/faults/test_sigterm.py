"""The fault harness with SIGTERM instead of SIGKILL: under the same mixed load, each graceful
stop exits 0 within --shutdown-timeout, and after each restart the ledger checks pass —
nothing acknowledged lost, nothing applied twice or half, timers and deliveries carry on.
(That the load reaches every endpoint family is test_kill9's to check; this run is shorter.)
The server logs of the whole run hold no credential and no webhook secret."""

from __future__ import annotations

import pytest

from faults.harness import Config, Harness
from faults.test_kill9 import SEED, explain
from faults.webhooks import SECRET


@pytest.mark.slow
def test_acknowledged_writes_survive_two_sigterms_and_each_exits_0(tmp_path):
    harness = Harness(
        Config(root=tmp_path, seconds=75, max_kills=2, load_s=(2.0, 4.0), seed=SEED, stop="term", progress=print)
    )
    report = harness.run()
    why = explain(report, tmp_path)
    assert report.kills == 2, why
    assert not report.lost and not report.duplicated and not report.problems, why  # exit codes are problems too
    assert report.acknowledged > 0 and report.counts["acked workflow/executions/dispatch"] > 0, why
    assert report.counts["SLA timers fired (due while the server was down)"] == 2, why
    assert report.counts["webhook events delivered"] > 0, why
    logs = "".join(path.read_text(errors="replace") for path in sorted(tmp_path.glob("server-*.log")))
    assert logs
    for secret in (harness.run_state.creds["apiKey"], harness.run_state.creds["authToken"], SECRET):
        assert secret not in logs
