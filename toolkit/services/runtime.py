"""The real clock and id source the server gives the engine (the simulator uses virtual ones)."""

from __future__ import annotations

import time

from toolkit.os_random import token_hex


class SystemClock:
    """Wall-clock epoch milliseconds. Only hosts use it; the engine is handed a clock."""

    def now(self) -> int:
        return time.time_ns() // 1_000_000


class SystemIds:
    """Unpredictable ids from the operating system's generator (:mod:`toolkit.os_random`)."""

    def rand6(self) -> str:
        return token_hex(3)

    def execution_id(self) -> str:
        return "ex_" + token_hex(10)
