"""Random ids from the operating system's generator, read a block at a time.

``os.urandom`` lets go of the GIL for its system call, and in a loaded server every id then
waited for the GIL to come back: a request id on the event loop for each request, an
execution's and its root steps' ids on the writer for each dispatch. Reading 4 KiB at once
makes that one wait per few hundred ids. The bytes are the generator's, handed out once each
and in order; a child process made by ``fork`` drops the parent's block and reads its own.

>>> len(token_hex(10)), token_hex(10) != token_hex(10)
(20, True)
"""

from __future__ import annotations

import os
import threading

BLOCK = 4096


class _Pool:
    __slots__ = ("_lock", "_block", "_at")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._block = b""
        self._at = 0

    def take(self, n: int) -> bytes:
        with self._lock:
            if self._at + n > len(self._block):
                self._block, self._at = os.urandom(max(BLOCK, n)), 0
            start = self._at
            self._at = start + n
            return self._block[start : self._at]


_pool = _Pool()


def _forked() -> None:
    global _pool
    _pool = _Pool()


os.register_at_fork(after_in_child=_forked)


def token_hex(nbytes: int) -> str:
    """``nbytes`` random bytes from the operating system's generator, as hex (like
    :func:`secrets.token_hex`, without a system call for each)."""
    return _pool.take(nbytes).hex()
