"""The one error type a client of the API can cause, and a map of every other.

:class:`ApiError` is the only exception the API answers with: its code maps to one HTTP
status (semantics §1) and a 5xx is always a bug. Every other exception class defined in
``toolkit/`` and ``server/`` is listed below with where it is defined and how it reaches a
user: as an ``ApiError`` code, as a ``collab`` exit code, as a recorded value, or never
(a test keeps this tree complete)::

    Exception
    ├── ApiError                 toolkit/errors.py       the API's answer: code -> HTTP status
    │   │                                                (400/401/403/404/409/429/500/503);
    │   │                                                ``collab simulate`` exits 2 on one
    │   │                                                (a bad --policy or --script)
    │   ├── RateLimited          toolkit/services/fair_shares  429 RESOURCE_EXHAUSTED with the
    │   │                                                ``Retry-After`` seconds it carries
    │   └── StoreUnavailable     toolkit/store/postgres/store  the PostgreSQL database lost or too
    │                                                    slow: 503 UNAVAILABLE with ``Retry-After``
    ├── WorkLimitExceeded        toolkit/work            a command over its work budget: never
    │                                                    raised to a user; the execution fails
    │                                                    ``work-limit-exceeded:edge:<i>``
    ├── BodyTimeout              server/limits           a body not sent within --body-timeout:
    │                                                    INVALID_ARGUMENT with HTTP 408
    ├── _Cancelled               toolkit/widgets/simulation  never: stops a SimulationPanel run
    │                                                    its Cancel button ended
    ├── AgentFailure             toolkit/engine/agents   never raised to a user: the agent step
    │                                                    fails with ``error = {code, message}``,
    │                                                    read back by executions/get
    ├── ConcurrentChange         toolkit/store/writer    a version check failed in the single
    │                                                    writer (a bug): INTERNAL (500)
    ├── BodyTooLarge             server/envelope         a request body over --max-body-bytes:
    │                                                    INVALID_ARGUMENT with HTTP 413
    ├── Refused                  toolkit/services/webhooks/destinations  a webhook destination
    │                                                    never called: no error to anyone, the
    │                                                    delivery is dead-lettered with the
    │                                                    reason as ``last_error``
    │                                                    (``collab deliveries``)
    ├── ValueError
    │   ├── PredicateError       toolkit/predicates      a bad ``when``: INVALID_ARGUMENT naming
    │   │                                                the edge's field; a ``collab lint``
    │   │                                                finding (exit 1)
    │   ├── UnsupportedPattern   toolkit/regex_linear    a regex needing backtracking: re-raised
    │   │                                                as PredicateError (above)
    │   ├── BadUrl               toolkit/webhook_urls    an undeliverable webhookUrl:
    │   │                                                INVALID_ARGUMENT naming webhookUrl; at
    │   │                                                delivery time a Refused (above)
    │   ├── BundleError          toolkit/widgets/bundle  never, once released: the package's own
    │   │                                                canvas modules broke the joiner's rules,
    │   │                                                raised when the canvas is imported (a
    │   │                                                packaging bug the tests catch)
    │   ├── CredentialError      toolkit/services/credentials  ``collab workspace rotate-key |
    │   │                                                revoke-token | rotate-secret``: message
    │   │                                                on stderr, exit 2
    │   └── UserTokenError       toolkit/tokens          raised to the host application calling
    │       │                                            ``verify_user_token``; the server never
    │       │                                            verifies user tokens, so never over HTTP
    │       └── _WrongSignature  toolkit/tokens          never: the next candidate secret is tried
    └── RuntimeError
        ├── ReplayError          toolkit/analytics/replay  ``collab replay``: message on stderr,
        │                                                  exit 2
        ├── BackupError          toolkit/store/backup      ``collab backup`` / ``restore``: message
        │                                                  on stderr, exit 2
        └── MirrorError          toolkit/analytics/mirror  never: the server's mirror thread keeps
                                                           it in ``Mirror.last_error`` and retries
                                                           at the next sync

``collab`` exit codes: 0 success, 1 a finding, check or request failed, 2 a usage error
(bad flag, unreadable file, a ReplayError, CredentialError or BackupError).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from toolkit.limits import MAX_LISTED_IN_MESSAGE


class ErrorCode(str, Enum):
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    NOT_FOUND = "NOT_FOUND"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    ABORTED = "ABORTED"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    INTERNAL = "INTERNAL"
    UNAVAILABLE = "UNAVAILABLE"

    @property
    def http_status(self) -> int:
        return _HTTP_STATUS[self]


_HTTP_STATUS = {
    ErrorCode.INVALID_ARGUMENT: 400,
    ErrorCode.FAILED_PRECONDITION: 400,
    ErrorCode.UNAUTHENTICATED: 401,
    ErrorCode.PERMISSION_DENIED: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.ALREADY_EXISTS: 409,
    ErrorCode.ABORTED: 409,
    ErrorCode.RESOURCE_EXHAUSTED: 429,
    ErrorCode.INTERNAL: 500,
    ErrorCode.UNAVAILABLE: 503,
}


class ApiError(Exception):
    """An error with a spec code and a message naming the field or rule.

    >>> e = ApiError(ErrorCode.NOT_FOUND, "execution ex_1 not found")
    >>> (e.code.value, e.code.http_status)
    ('NOT_FOUND', 404)
    """

    http_status: int  # only on an error a server answered: HttpClient sets it to the response's status

    def __init__(self, code: ErrorCode | str, message: str):
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message

    def to_body(self) -> dict:
        return {"error": {"message": self.message, "status": self.code.value}}

    def __repr__(self) -> str:
        return f"ApiError({self.code.value}, {self.message!r})"


def listed(items: Iterable[str], separator: str = ", ", limit: int = MAX_LISTED_IN_MESSAGE) -> str:
    """``items`` joined for a message, the first ``limit`` of them and then how many more, so
    a message about ten thousand problems stays short enough to read (and to send).

    >>> listed(["a", "b", "c"], limit=2)
    'a, b … and 1 more'
    >>> listed(str(i) for i in range(10_020))[-20:]
    '19 … and 10,000 more'
    """
    shown: list[str] = []
    rest = 0
    for item in items:
        if len(shown) < limit:
            shown.append(item)
        else:
            rest += 1
    text = separator.join(shown)
    return f"{text} … and {rest:,} more" if rest else text
