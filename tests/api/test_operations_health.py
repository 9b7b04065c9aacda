"""GET /healthz and GET /readyz over real HTTP: ready on a sound server; 503 with a one-line
reason when the writer is stuck, its queue over the bound, or the database file gone.

The stuck writer is real: the app runs under uvicorn in this process (the same app `collab
serve` runs), and the test hands its writer a job that waits on an event, as a slow commit
would hold it; the queue is filled with real jobs behind it."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import httpx
import pytest
from processes import free_port

from api.inprocess import InProcess
from api.support import DEF_CREATE, DEF_LIST, DISPATCH, create_workspace, http_client, human_definition, wait_for
from server import Settings
from toolkit.services.readiness import Readiness
from toolkit.services.webhooks.deliverer import DeliverySettings
from toolkit.webhook_urls import WebhookPolicy


def ready(url: str) -> httpx.Response:
    return httpx.get(f"{url}/readyz", timeout=30)


def test_healthz_and_readyz_answer_without_credentials_and_say_nothing_of_workspaces(server):
    health, readiness = httpx.get(f"{server.base_url}/healthz"), ready(server.base_url)
    assert (health.status_code, health.text) == (200, "ok\n")
    assert (readiness.status_code, readiness.text) == (200, "ready\n")
    for path in ("/healthz", "/readyz"):  # GET only; outside /v2
        assert httpx.post(f"{server.base_url}{path}").status_code == 405
        assert httpx.get(f"{server.base_url}/v2{path}").status_code in (404, 405)


def test_readyz_is_503_while_the_writer_is_stuck_and_200_once_it_moves(tmp_path):
    bounds = Readiness(writer_queue=5, timeout_s=0.5)
    with InProcess(Settings(db=tmp_path / "stuck.duckdb", readiness=bounds, mirror_every_s=None)) as srv:
        assert ready(srv.url).status_code == 200
        release = threading.Event()
        blocker: Future = srv.writer.submit(lambda tx: release.wait(60))
        try:
            answer = ready(srv.url)
            assert answer.status_code == 503
            assert answer.text.startswith("not ready: writer: no commit for ") and answer.text.count("\n") == 1
            assert httpx.get(f"{srv.url}/healthz").status_code == 200  # the process is still up
            queued = [srv.writer.submit(lambda tx: None) for _ in range(bounds.writer_queue + 1)]
            answer = ready(srv.url)
            assert answer.status_code == 503 and "jobs queued, over the bound of 5" in answer.text, answer.text
        finally:
            release.set()
        blocker.result(timeout=30)
        for job in queued:
            job.result(timeout=30)
        wait_for(lambda: ready(srv.url).status_code == 200, what="ready again")


def test_readyz_is_503_over_the_outbox_bound(tmp_path):
    """Deliveries to a port nothing listens on stay pending (retried, 60 s apart)."""
    creds = create_workspace(tmp_path / "outbox.duckdb")
    port = free_port()
    policy = WebhookPolicy(allow_loopback=True, extra_ports=frozenset({port}))
    settings = Settings(
        db=tmp_path / "outbox.duckdb",
        readiness=Readiness(outbox_backlog=1),
        mirror_every_s=None,
        delivery=DeliverySettings(policy=policy, retry_delays_ms=(60_000,)),
    )
    with InProcess(settings) as srv:
        headers = {"x-service-api-key": creds["apiKey"], "x-service-auth-token": creds["authToken"]}
        with http_client(base_url=srv.url, headers=headers) as http:
            assert http.post(DEF_CREATE, json={"data": human_definition("held-back")}).status_code == 200
            assert ready(srv.url).status_code == 200
            for _ in range(2):
                answer = http.post(
                    DISPATCH,
                    json={
                        "data": {
                            "definitionId": "held-back",
                            "webhookSecret": "s" * 16,
                            "webhookUrl": f"https://127.0.0.1:{port}/h",
                        }
                    },
                )
                assert answer.status_code == 200, answer.text
        answer = ready(srv.url)
        assert answer.status_code == 503 and answer.text.startswith("not ready: outbox: "), answer.text
        assert "over the bound of 1" in answer.text


def test_readyz_is_503_when_the_database_file_is_gone(tmp_path):
    db = tmp_path / "gone.duckdb"
    with InProcess(Settings(db=db, mirror_every_s=None)) as srv:
        assert ready(srv.url).status_code == 200
        for leftover in tmp_path.glob("gone.duckdb*"):
            leftover.unlink()
        answer = ready(srv.url)
        assert answer.status_code == 503
        assert answer.text == f"not ready: database: database file {db} is gone\n"
        assert httpx.get(f"{srv.url}/healthz").status_code == 200


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_probes_need_no_credentials_while_the_api_does(server, path):
    assert httpx.get(f"{server.base_url}{path}", headers={"x-service-api-key": "wrong"}).status_code == 200
    assert httpx.post(f"{server.base_url}{DEF_LIST}", json={"data": {}}).status_code == 401
