"""A thin Starlette adapter over :mod:`toolkit.services`: envelope, auth, routing, timers."""

from server.app import Settings, create_app

__all__ = ["Settings", "create_app"]
