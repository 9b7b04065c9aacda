"""The route table: one line a path — its request model, the service function, its result model.

``None`` as the request model means the service takes the raw ``data`` object (definition
bodies, whose authored JSON is stored and echoed exactly as sent).
"""

from __future__ import annotations

from typing import NamedTuple

from toolkit.client import OPERATIONS


class Endpoint(NamedTuple):
    path: str
    request: type | None
    service: object
    result: type
    schema: type  # the request schema published in OpenAPI


# The workflow endpoints come from the one table the clients are built from, so the server,
# the HTTP client and the in-process client cannot drift apart.
WORKFLOW_ROUTES: list[Endpoint] = [Endpoint(o.path, o.request, o.service, o.result, o.schema) for o in OPERATIONS]


def _all_routes() -> list[Endpoint]:
    from server.routes_access import ACCESS_ROUTES
    from server.routes_agents import AGENT_ROUTES
    from server.routes_annotations import ANNOTATION_ROUTES

    return WORKFLOW_ROUTES + ACCESS_ROUTES + ANNOTATION_ROUTES + AGENT_ROUTES


ROUTES: list[Endpoint] = _all_routes()
