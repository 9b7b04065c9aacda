"""Persistence behind one small interface; DuckDB is the implementation.

``Store(path)`` opens (creating and migrating) a database file — ``./data/collab.duckdb``
by default, ``":memory:"`` for unit tests. Writes go through :attr:`Store.writer` (one thread,
group commit); reads use per-thread cursors that see committed data.
"""

from toolkit.store.duck import DEFAULT_PATH, Store
from toolkit.store.writer import Tx, Writer

__all__ = ["DEFAULT_PATH", "Store", "Tx", "Writer"]
