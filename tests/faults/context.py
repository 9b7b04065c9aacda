"""What an operation or a check works with: requests that record what they promised.

Every request goes through :meth:`Ctx.read` or :meth:`Ctx.write`. A write that the server
acknowledges (200 and ``{"result": …}``, and ``ok(result)`` when given) sets its facts in the
ledger. A write whose answer never comes (the server was killed with it in flight) adds its
facts as maybes and raises :class:`ServerGone`, which ends the operation; so does a request
the dead server could not take (:class:`NotSent`), which promised nothing. A normal worker's
request refused 429 with ``Retry-After`` (the server's rate limits refuse before doing
anything) is sent again after the wait, as a client should. A 5xx, a
malformed envelope or an error code the caller did not ``allow`` is reported as a problem:
against a server that is up, each of these is a bug.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any

import httpx

from faults.ledger import ABSENT, Ledger, Report

if TYPE_CHECKING:  # pragma: no cover
    from faults.harness import Run


class ServerGone(Exception):
    """The server stopped answering in the middle of an operation."""


class NotSent(ServerGone):
    """The server was not there to take the request (the connection was refused)."""


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


class Ctx:
    """One load worker (``owner`` is its number) or the harness itself (``owner`` ``"h"``)."""

    def __init__(self, run: Run, owner: Hashable, rng: random.Random, creds: dict | None = None) -> None:
        self.run = run
        self.creds = creds  # the hostile worker's own workspace; None: the run's
        self.owner = owner
        self.rng = rng
        self.ledger: Ledger = run.ledger
        self.report: Report = run.report
        self.state: dict = {}  # an operation family's own notes (never facts: those go in the ledger)
        self._client: httpx.Client | None = None
        self._base: str | None = None
        self._counter = 0

    def new_id(self, prefix: str) -> str:
        """An id unique in the run, e.g. ``w3-user17``."""
        self._counter += 1
        return f"w{self.owner}-{prefix}{self._counter}"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # ------------------------------------------------------------------ requests

    def _post(self, path: str, data: Any) -> httpx.Response:
        base = self.run.server.base_url
        if self._client is None or self._base != base:  # a restarted server listens on a new port
            self.close()
            self._client, self._base = self.run.server.client(self.creds or self.run.creds, timeout=60), base
        for _ in range(10):
            self.report.request()
            loud, began = self.run.hostile_active, time.perf_counter()
            try:
                resp = self._client.post(path, json={"data": data})
            except httpx.ConnectError as exc:  # never reached the server: nothing to be unsure about
                raise NotSent(f"{path}: {type(exc).__name__}") from exc
            except httpx.TransportError as exc:
                raise ServerGone(f"{path}: {type(exc).__name__}") from exc
            if isinstance(self.owner, int):
                self.report.latency(loud, time.perf_counter() - began)
            # A rate limit refuses before anything happens: a client waits as told and resends.
            wait = resp.headers.get("retry-after", "")
            if resp.status_code != 429 or not wait.isdigit() or self.creds is not None:
                return resp
            self.report.count("normal requests refused 429 and resent")
            time.sleep(int(wait))
        return resp

    def read(self, path: str, data: Any, *, allow: Iterable[str] = ()) -> Any:
        """The ``result`` of a request that changes nothing; None for an allowed error code
        (or a reported problem)."""
        return self._answer(path, data, self._post(path, data), allow)

    def find(self, path: str, data: Any) -> Any:
        """The ``result`` of a read; ABSENT when the server answers ``NOT_FOUND``; None on a
        reported problem."""
        resp = self._post(path, data)
        if resp.status_code == 404:
            try:
                if resp.json()["error"]["status"] == "NOT_FOUND":
                    return ABSENT
            except (ValueError, KeyError, TypeError):
                pass
        return self._answer(path, data, resp, ())

    def write(
        self,
        path: str,
        data: Any,
        facts: dict[tuple, Hashable] | None = None,
        *,
        ok: Callable[[Any], bool] | None = None,
        on_ack: Callable[[Any], None] | None = None,
        on_unknown: Callable[[], None] | None = None,
        allow: Iterable[str] = (),
    ) -> Any:
        """Send a write; when acknowledged, ``facts`` hold and ``on_ack(result)`` runs; when the
        server dies before answering, they become maybes, ``on_unknown()`` runs and
        :class:`ServerGone` is raised. Returns the result, or None when refused."""
        facts = facts or {}
        try:
            resp = self._post(path, data)
        except NotSent:
            raise
        except ServerGone:
            self._unknown(facts, on_unknown)
            raise
        if resp.status_code >= 500:
            self._unknown(facts, on_unknown)  # what a failed request did is not known
        result = self._answer(path, data, resp, allow)
        if result is None or resp.status_code >= 500:
            return None
        if ok is not None and not ok(result):
            self.report.problem(f"{path} {_short(data)}: refused: {_short(result)}")
            return None
        for key, value in facts.items():
            self.ledger.acked(key, value)
        if on_ack is not None:
            on_ack(result)
        self.report.ack(path.removeprefix("/v2/"))
        return result

    def _unknown(self, facts: dict, on_unknown) -> None:
        self.report.in_flight()
        for key, value in facts.items():
            self.ledger.unknown(key, value)
        if on_unknown is not None:
            on_unknown()

    def _answer(self, path: str, data: Any, resp: httpx.Response, allow: Iterable[str]) -> Any:
        try:
            body = resp.json()
        except ValueError:
            body = None
        if resp.status_code == 200 and isinstance(body, dict) and list(body) == ["result"]:
            return body["result"]
        error = body.get("error") if isinstance(body, dict) else None
        if resp.status_code < 500 and isinstance(error, dict) and error.get("status") in allow:
            return None
        self.report.problem(f"{path} {_short(data)}: answered {resp.status_code} {resp.text[:300]}")
        return None

    def pages(
        self,
        path: str,
        data: dict,
        token_field: str = "pageToken",
        next_field: str = "nextPageToken",
        items: str = "data",
    ) -> list | None:
        """Every item of a paged read (None if a page failed)."""
        out, token = [], None
        while True:
            page = self.read(path, {**data, **({token_field: token} if token else {})})
            if page is None:
                return None
            out += page[items]
            token = page.get(next_field)
            if token is None or page.get("hasMore") is False:
                return out
