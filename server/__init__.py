"""A thin Starlette adapter over :mod:`toolkit.services`: envelope, auth, routing; it starts and
stops the serving process (:mod:`toolkit.services.serving`)."""

from server.app import Settings, create_app

__all__ = ["Settings", "create_app"]
