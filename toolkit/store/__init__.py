"""Persistence behind one seam: every SQL statement of the server lives in this package.

Two backends with one surface. ``Store(path)`` is DuckDB, the embedded default: a database
file — ``./data/collab.duckdb`` by default, ``":memory:"`` for unit tests — whose writes go
through one writer thread with group commit (:attr:`Store.writer`), and whose reads use
per-thread cursors that see committed data. ``PostgresStore(url)``
(:mod:`toolkit.store.postgres.store`) is PostgreSQL, for several server processes: a pool,
one transaction per write job, retried on conflict. :func:`open_store` picks by what ``--db``
names. Both offer ``read(sql, params)``, ``write(fn)`` / ``write_async(fn)`` with ``fn(tx)``
given ``execute``, ``append``, ``update`` and ``next_key``, ``problem()``, ``close()``, and
say which they are (``dialect``; ``shared`` when other processes write too).
"""

from toolkit.store.duck import DEFAULT_PATH, Store
from toolkit.store.open import AnyStore, is_url, open_store
from toolkit.store.writer import Tx, Writer

__all__ = ["DEFAULT_PATH", "AnyStore", "Store", "Tx", "Writer", "is_url", "open_store"]
