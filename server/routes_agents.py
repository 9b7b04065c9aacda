"""Routes for agents and prompt validation (api-v2 §4.10, §4.11; semantics §11)."""

from __future__ import annotations

from server.routes import Endpoint

AGENT_ROUTES: list[Endpoint] = []
