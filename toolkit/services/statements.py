"""Parsed statements moved to :mod:`toolkit.store.statements` (SQL lives in the store); the
annotation services still import them from here until their SQL moves too."""

from toolkit.store.statements import parsed

__all__ = ["parsed"]
