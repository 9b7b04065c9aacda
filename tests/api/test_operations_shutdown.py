"""SIGTERM: `collab serve` stops accepting connections, finishes the requests in flight,
drains the writer and exits 0 within --shutdown-timeout; what it acknowledged is in the file."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time

import httpx

from api.support import DECIDE, DEF_CREATE, DISPATCH, Api, human_definition, serve_fresh, stored, uid, wait_for

TIMEOUT_S = 10  # --shutdown-timeout: a stalled request is cut after 5 s


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def receive_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def start_request(srv, body: bytes, request_id: str) -> socket.socket:
    """A dispatch whose head and first bytes are sent; the rest of the body is still to come."""
    head = (
        f"POST {DISPATCH} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"x-service-api-key: {srv.creds_a['apiKey']}\r\nx-service-auth-token: {srv.creds_a['authToken']}\r\n"
        f"x-request-id: {request_id}\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode()
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=60)
    sock.sendall(head + body[:7])
    return sock


def test_a_request_in_flight_at_sigterm_is_answered_and_a_stalled_one_cannot_hold_the_stop(tmp_path):
    """Stop accepting; answer the request in flight; a client that never finishes its request
    is cut off after half the timeout; exit 0 within the timeout."""
    srv = serve_fresh(tmp_path, "inflight", ("--shutdown-timeout", str(TIMEOUT_S)))
    try:
        definition_id = uid("inflight")
        with srv.client(srv.creds_a) as client:
            Api(client).ok(DEF_CREATE, human_definition(definition_id))
        body = json.dumps({"data": {"definitionId": definition_id}}).encode()
        finishing, stalled = start_request(srv, body, "in-flight-1"), start_request(srv, body, "stalled-1")
        time.sleep(0.5)  # for the server to read both heads (no answer can tell us it has)
        srv.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: refused(srv.port), timeout=TIMEOUT_S, what="the listening socket to close")
        assert srv.proc.poll() is None  # still finishing the requests in flight
        finishing.sendall(body[7:])
        answer = receive_all(finishing).decode()
        finishing.close()
        status_line, _, rest = answer.partition("\r\n")
        assert status_line == "HTTP/1.1 200 OK", answer
        assert "x-request-id: in-flight-1" in rest.lower()
        execution_id = json.loads(rest.split("\r\n\r\n", 1)[1])["result"]["executionId"]
        assert srv.proc.wait(timeout=TIMEOUT_S + 15) == 0, srv.log()[-3000:]
        assert not receive_all(stalled).startswith(b"HTTP/1.1 200")  # cut off, never applied
        stalled.close()
    finally:
        srv.stop()
    assert stored(srv.db, "SELECT execution_id, status FROM executions") == [(execution_id, "running")]


def test_sigterm_under_load_exits_0_and_keeps_every_acknowledged_write(tmp_path):
    srv = serve_fresh(tmp_path, "load", ("--shutdown-timeout", str(TIMEOUT_S)))
    definition_id = uid("load")
    with srv.client(srv.creds_a) as client:
        Api(client).ok(DEF_CREATE, human_definition(definition_id))
    acked: dict[str, bool] = {}  # execution id -> its decision acknowledged
    lock, stop = threading.Lock(), threading.Event()

    def work() -> None:
        with srv.client(srv.creds_a, timeout=60) as http:
            while not stop.is_set():
                try:
                    answer = http.post(DISPATCH, json={"data": {"definitionId": definition_id}})
                    if answer.status_code != 200:
                        return
                    execution_id = answer.json()["result"]["executionId"]
                    with lock:
                        acked[execution_id] = False
                    step = next(
                        s
                        for s in http.post(
                            "/v2/workflow/executions/get", json={"data": {"executionId": execution_id}}
                        ).json()["result"]["steps"]
                        if s["status"] == "waiting"
                    )
                    decided = http.post(
                        DECIDE,
                        json={
                            "data": {
                                "executionId": execution_id,
                                "stepId": step["stepId"],
                                "reviewerId": "ann",
                                "decision": "approve",
                            }
                        },
                    )
                    if decided.status_code == 200 and decided.json()["result"]["recorded"]:
                        with lock:
                            acked[execution_id] = True
                except (httpx.TransportError, KeyError, StopIteration):
                    return  # the server is going away

    workers = [threading.Thread(target=work) for _ in range(4)]
    try:
        for w in workers:
            w.start()
        wait_for(lambda: sum(acked.values()) >= 20, timeout=120, what="load before the signal")
        srv.proc.send_signal(signal.SIGTERM)
        code = srv.proc.wait(timeout=TIMEOUT_S + 15)
        stop.set()
        for w in workers:
            w.join(timeout=60)
        assert code == 0, srv.log()[-3000:]
    finally:
        stop.set()
        srv.stop()
    status = dict(stored(srv.db, "SELECT execution_id, status FROM executions"))
    gaps = stored(
        srv.db,
        "SELECT execution_id FROM events GROUP BY execution_id "
        "HAVING count(*) <> max(seq) OR count(DISTINCT seq) <> count(*)",
    )
    assert gaps == []
    for execution_id, decided in acked.items():
        assert execution_id in status, f"acknowledged dispatch {execution_id} lost"
        if decided:
            assert status[execution_id] == "completed", execution_id
