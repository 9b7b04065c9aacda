"""Routes for comment annotations and activity logs (api-v2 §4.12–4.16; semantics §9, §10)."""

from __future__ import annotations

from server.routes import Endpoint

ANNOTATION_ROUTES: list[Endpoint] = []
