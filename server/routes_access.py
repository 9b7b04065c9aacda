"""Routes for tokens, permissions, organizations, folders, documents, users and user groups (api-v2 §4.1–4.4, §4.17, §4.18; semantics §8)."""

from __future__ import annotations

from server.routes import Endpoint

ACCESS_ROUTES: list[Endpoint] = []
