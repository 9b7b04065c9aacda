"""Two clients of the API with the same methods: :class:`LocalClient` calls the
services in process (notebooks, tests), :class:`HttpClient` calls a server over HTTP (httpx).

Code written against one runs unchanged against the other: the methods, their arguments,
their results (the ``result`` object of the response, as plain JSON dicts) and their errors
(:class:`~toolkit.errors.ApiError` with the spec code and the server's message) are the same.

In process, on a throw-away database with a fresh workspace::

    from toolkit import examples
    from toolkit.client import LocalClient

    with LocalClient.open() as client:                 # db=":memory:" by default
        client.create_definition(examples.load("parallel-review"))
        run = client.dispatch("parallel-review", correlation_id="campaign-42")
        for step in client.get_execution(run["executionId"])["steps"]:
            if step["status"] == "waiting":
                client.record_reviewer_decision(run["executionId"], step["stepId"],
                                                step["reviewerIds"][0], "approve")
        print([e["type"] for e in client.iter_events(run["executionId"])])

Over HTTP, against ``collab serve`` (credentials from ``collab workspace create --json``)::

    from toolkit.client import HttpClient

    with HttpClient("http://127.0.0.1:8787", api_key, auth_token) as client:
        run = client.dispatch("parallel-review")
        client.get_events(run["executionId"], since_seq=0, page_size=50)

Arguments: each method takes its request fields as keyword arguments in snake_case
(``correlation_id=…``) or camelCase, or as one dict of the request's wire fields in place of
the first argument (``client.dispatch({"definitionId": "parallel-review"})``); keyword
arguments left at ``None`` are not sent. Only top-level keys are renamed: nested objects
(``output``, ``triggerContext``, definition bodies) go as written.

Both clients are built from :data:`~toolkit.services.operations.OPERATIONS`, the one table
of the API's endpoints — path, request model, service function, result model, published
request schema — which the server's routes and ``/openapi.json`` read too, so they cannot
drift apart. They have one method per operation, named as its service function: the
workflow methods below take their main fields positionally; those of the other areas
(:class:`~toolkit.client_areas.AreaMethods`: ``add_users``, ``get_annotations``,
``create_agent``…) take the request as a dict or keyword arguments.

The in-process client runs no background timers: SLA deadlines fire only when
``toolkit.services.workflow.tick`` is called, and webhooks are not delivered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pydantic.alias_generators import to_camel

from toolkit.client_areas import AreaMethods
from toolkit.errors import ApiError, ErrorCode
from toolkit.services.operations import BY_NAME, BY_PATH, OPERATIONS, Operation

if TYPE_CHECKING:
    from toolkit.services.workspaces import Credentials
    from toolkit.store import Store

__all__ = ["OPERATIONS", "HttpClient", "LocalClient", "Operation", "WorkflowClient", "serve_in_background"]

# HttpClient drops a pooled connection idle this long, well inside `collab serve`'s 5 s
# keep-alive: with equal timeouts, a request sent as the server closes the connection is reset.
KEEPALIVE_S = 2.0


def _wire(key: str) -> str:
    """``since_seq`` -> ``sinceSeq``; camelCase keys are kept as they are."""
    return to_camel(key) if "_" in key else key


def _data(first: Any, named: Mapping[str, Any], extra: Mapping[str, Any]) -> dict:
    """The request's ``data``: ``first`` is a dict of wire fields or the first positional
    field (already in ``named``); ``named`` and ``extra`` are keyword fields (``None`` = omit)."""
    data: dict = {}
    if isinstance(first, Mapping):
        data.update((_wire(k), v) for k, v in first.items())
    for source in (named, extra):
        for key, value in source.items():
            if value is not None:
                data[_wire(key)] = value
    return data


class WorkflowClient(AreaMethods):
    """The methods, one per endpoint of :data:`OPERATIONS` plus :meth:`iter_events`; a
    subclass supplies the transport, :meth:`_call`. Every method returns the ``result``
    object as a dict, or raises :class:`~toolkit.errors.ApiError`."""

    def _call(self, op: Operation, data: dict) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def call(self, operation: str, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """Any endpoint by method name (``"dispatch"``) or path (``"/v2/workflow/executions/dispatch"``)."""
        op = BY_NAME.get(operation) or BY_PATH.get(operation)
        if op is None:
            raise ValueError(f"no operation {operation!r}; known: {', '.join(BY_NAME)}")
        return self._call(op, _data(data, {}, fields))

    def _op(self, name: str, first: Any, named: Mapping[str, Any], extra: Mapping[str, Any]) -> dict:
        return self._call(BY_NAME[name], _data(first, named, extra))

    # ------------------------------------------------------------------ definitions

    def create_definition(self, body: Mapping[str, Any] | None = None, **fields: Any) -> dict:
        """Create a definition from its body (api-v2 §4.5); returns the DefinitionView."""
        return self._op("create_definition", body, {}, fields)

    def get_definition(self, definition_id: str | Mapping[str, Any], **fields: Any) -> dict:
        return self._op("get_definition", definition_id, _first("definition_id", definition_id), fields)

    def list_definitions(self, filters: Mapping[str, Any] | None = None, **fields: Any) -> dict:
        """``scope``, ``status``, ``tags``, ``page_size``, ``cursor``; returns ``{items, nextCursor, hasMore}``."""
        return self._op("list_definitions", filters, {}, fields)

    def update_definition(self, body: Mapping[str, Any] | None = None, **fields: Any) -> dict:
        """Full replace; the body carries ``ifVersion`` (the version being replaced)."""
        return self._op("update_definition", body, {}, fields)

    def delete_definition(self, definition_id: str | Mapping[str, Any], **fields: Any) -> dict:
        return self._op("delete_definition", definition_id, _first("definition_id", definition_id), fields)

    # ------------------------------------------------------------------ executions

    def dispatch(self, definition_id: str | Mapping[str, Any], **fields: Any) -> dict:
        """``idempotency_key``, ``correlation_id``, ``trigger_context``, ``organization_id``,
        ``document_id``, ``webhook_url``, ``webhook_secret``; returns ``{executionId, correlationId, deduplicated}``."""
        return self._op("dispatch", definition_id, _first("definition_id", definition_id), fields)

    def get_execution(self, execution_id: str | Mapping[str, Any], **fields: Any) -> dict:
        return self._op("get_execution", execution_id, _first("execution_id", execution_id), fields)

    def list_executions(self, filters: Mapping[str, Any] | None = None, **fields: Any) -> dict:
        """``definition_id``, ``status``, ``page_size``, ``cursor``; returns ``{items, nextCursor, hasMore}``."""
        return self._op("list_executions", filters, {}, fields)

    def cancel_execution(self, execution_id: str | Mapping[str, Any], reason: str | None = None, **fields: Any) -> dict:
        return self._op(
            "cancel_execution", execution_id, {**_first("execution_id", execution_id), "reason": reason}, fields
        )

    def get_events(
        self,
        execution_id: str | Mapping[str, Any],
        since_seq: int | None = 0,
        page_size: int | None = 100,
        **fields: Any,
    ) -> dict:
        """One page of external events with ``seq > since_seq``: ``{executionId, events, nextCursor, hasMore}``."""
        named = {**_first("execution_id", execution_id), "since_seq": since_seq, "page_size": page_size}
        if isinstance(execution_id, Mapping):  # the dict's own sinceSeq / pageSize win over the defaults
            named = {}
        return self._op("get_events", execution_id, named, fields)

    def iter_events(self, execution_id: str, since_seq: int = 0, page_size: int = 100) -> Iterator[dict]:
        """Every external event after ``since_seq``, following ``nextCursor`` while ``hasMore``."""
        while True:
            page = self.get_events(execution_id, since_seq, page_size)
            yield from page["events"]
            if not page["hasMore"]:
                return
            if page["nextCursor"] <= since_seq:  # a server that does not advance would loop forever
                raise ApiError(
                    ErrorCode.INTERNAL,
                    f"getEvents: nextCursor {page['nextCursor']} did not advance "
                    f"past {since_seq} while hasMore is true",
                )
            since_seq = page["nextCursor"]

    # ------------------------------------------------------------------ steps

    def resolve_step(
        self,
        execution_id: str | Mapping[str, Any],
        step_id: str | None = None,
        action: str | None = None,
        actor_id: str | None = None,
        output: dict | None = None,
        reason: str | None = None,
        **fields: Any,
    ) -> dict:
        """Operator or reviewer override (api-v2 §4.6): ``action`` is one of ``force-approve``,
        ``force-reject``, ``force-complete``, ``force-fail``, ``reviewer-approve``, ``reviewer-reject``."""
        return self._op(
            "resolve_step",
            execution_id,
            {
                **_first("execution_id", execution_id),
                "step_id": step_id,
                "action": action,
                "actor_id": actor_id,
                "output": output,
                "reason": reason,
            },
            fields,
        )

    def record_reviewer_decision(
        self,
        execution_id: str | Mapping[str, Any],
        step_id: str | None = None,
        reviewer_id: str | None = None,
        decision: str | None = None,
        reason: str | None = None,
        **fields: Any,
    ) -> dict:
        """``decision`` is ``approve`` or ``reject``; returns ``{recorded, aggregatorStatus, resumeScheduled, …}``."""
        return self._op(
            "record_reviewer_decision",
            execution_id,
            {
                **_first("execution_id", execution_id),
                "step_id": step_id,
                "reviewer_id": reviewer_id,
                "decision": decision,
                "reason": reason,
            },
            fields,
        )

    def record_agent_resolution(
        self,
        execution_id: str | Mapping[str, Any],
        step_id: str | None = None,
        resolution_id: str | None = None,
        status: str | None = None,
        output: dict | None = None,
        error_message: str | None = None,
        **fields: Any,
    ) -> dict:
        """A blocking agent's answer (api-v2 §4.7): ``status`` is ``success`` or ``failure``
        (then ``error_message`` is required)."""
        return self._op(
            "record_agent_resolution",
            execution_id,
            {
                **_first("execution_id", execution_id),
                "step_id": step_id,
                "resolution_id": resolution_id,
                "status": status,
                "output": output,
                "error_message": error_message,
            },
            fields,
        )

    def cancel_step(
        self,
        execution_id: str | Mapping[str, Any],
        step_id: str | None = None,
        actor_id: str | None = None,
        reason: str | None = None,
        **fields: Any,
    ) -> dict:
        return self._op(
            "cancel_step",
            execution_id,
            {**_first("execution_id", execution_id), "step_id": step_id, "actor_id": actor_id, "reason": reason},
            fields,
        )

    # ------------------------------------------------------------------ webhook deliveries

    def list_deliveries(self, filters: Mapping[str, Any] | None = None, **fields: Any) -> dict:
        """Webhook deliveries: ``status`` (``pending``, ``delivered``, ``dead``), ``execution_id``,
        ``page_size``, ``cursor``; returns ``{items, nextCursor, hasMore}``."""
        return self._op("list_deliveries", filters, {}, fields)

    def redrive_deliveries(
        self, event_ids: list[str] | Mapping[str, Any] | None = None, execution_id: str | None = None, **fields: Any
    ) -> dict:
        """Send dead letters again (by ``event_ids``, or all of ``execution_id``); ``{redriven, eventIds}``."""
        if isinstance(event_ids, Mapping):
            return self._op("redrive_deliveries", event_ids, {}, fields)
        return self._op("redrive_deliveries", None, {"event_ids": event_ids, "execution_id": execution_id}, fields)


def _first(name: str, value: Any) -> dict:
    """The first positional field, unless the caller passed the whole request as a dict."""
    return {} if isinstance(value, Mapping) else {name: value}


# ---------------------------------------------------------------------------- in process


class LocalClient(WorkflowClient):
    """The API in process: validates each request with the server's models and calls the
    service function. Requests and results pass through JSON, as on the wire, so a result
    never shares objects with the services' caches and a non-JSON value fails as it would
    over HTTP. An ApiError is raised as the server would answer it; any other exception is a
    bug in the services and propagates with its traceback (the server logs it and answers
    ``INTERNAL``).

    >>> from toolkit import examples
    >>> with LocalClient.open() as client:
    ...     _ = client.create_definition(examples.load("parallel-review"))
    ...     client.dispatch("parallel-review", correlation_id="c-1")["correlationId"]
    'c-1'
    """

    def __init__(self, services, workspace) -> None:
        self.services = services
        self.workspace = workspace
        self.credentials: Credentials | None = None  # set by open() when it created the workspace
        self._owned_store: Store | None = None

    @classmethod
    def open(
        cls,
        db: str = ":memory:",
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        label: str = "notebook",
        runner=None,
    ) -> LocalClient:
        """A client on its own Store and Services. With ``api_key`` and ``auth_token`` it acts
        as that existing workspace; otherwise it creates one (its credentials are in
        ``client.credentials``). Close it (or use ``with``) to close the database."""
        from toolkit.services.context import Services
        from toolkit.services.workspaces import Authenticator, create_workspace
        from toolkit.store import Store

        store = Store(db)
        try:
            services = Services(store) if runner is None else Services(store, runner=runner)
            credentials = None
            if api_key is None and auth_token is None:
                credentials = create_workspace(store, label, now_ms=services.clock.now())
                api_key, auth_token = credentials.api_key, credentials.auth_token
            workspace = Authenticator(store).authenticate(api_key, auth_token)
        except BaseException:
            store.close()
            raise
        client = cls(services, workspace)
        client.credentials = credentials
        client._owned_store = store
        return client

    def _call(self, op: Operation, data: dict) -> dict:
        return json.loads(json.dumps(op.call(self.services, self.workspace, json.loads(json.dumps(data)))))

    def close(self) -> None:
        """Close the database if :meth:`open` opened it (a client over given services owns nothing)."""
        if self._owned_store is not None:
            self._owned_store.close()
            self._owned_store = None

    def __enter__(self) -> LocalClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------- over HTTP


class HttpClient(WorkflowClient):
    """The API over HTTP: ``POST {base_url}{path}`` with ``{"data": …}`` and the two service
    headers; returns ``result``; an ``{"error": {status, message}}`` body raises
    ``ApiError(status, message)`` (its ``http_status`` attribute holds the HTTP status). A
    server that cannot be reached, or an answer that is not the envelope, raises
    ``ApiError(UNAVAILABLE)``. Each instance keeps one ``httpx.Client`` (a keep-alive
    connection pool); close it, or use ``with``. A pooled connection idle for ``KEEPALIVE_S``
    (2 s) is not used again; behind a proxy that closes idle connections sooner, pass
    ``limits=httpx.Limits(keepalive_expiry=…)`` below its timeout."""

    def __init__(self, base_url: str, api_key: str, auth_token: str, timeout: float = 10, **httpx_options) -> None:
        import httpx  # only the HTTP client needs it (the `server` extra)

        self._httpx = httpx
        self.base_url = base_url.rstrip("/")
        httpx_options.setdefault("limits", httpx.Limits(keepalive_expiry=KEEPALIVE_S))
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=timeout,
            headers={
                "x-service-api-key": api_key,
                "x-service-auth-token": auth_token,
                "content-type": "application/json",
                "accept": "application/json",
            },
            **httpx_options,
        )

    def _call(self, op: Operation, data: dict) -> dict:
        content = json.dumps({"data": data}, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        try:
            response = self._http.post(op.path, content=content)
        except self._httpx.TransportError as exc:
            raise ApiError(ErrorCode.UNAVAILABLE, f"{self.base_url}{op.path}: {type(exc).__name__}: {exc}") from exc
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and "result" in body and response.is_success:
            return body["result"]
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            try:
                code = ErrorCode(error.get("status"))
            except ValueError:
                code, message = ErrorCode.INTERNAL, f"{error.get('status')}: {error['message']}"
            else:
                message = error["message"]
            failure = ApiError(code, message)
        else:
            failure = ApiError(
                ErrorCode.UNAVAILABLE,
                f"{op.path}: HTTP {response.status_code} without an API envelope: {response.text[:200]!r}",
            )
        failure.http_status = response.status_code
        raise failure

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def serve_in_background(db=None, port=None, **options):
    """Start ``collab serve`` as a subprocess on a free port and wait until it answers; the
    handle gives ``.url``, ``.credentials``, ``.client()`` and ``.stop()`` (see
    :mod:`toolkit.background_server`)."""
    from toolkit.background_server import serve_in_background as start

    return start(db, port, **options)
