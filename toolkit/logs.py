"""Server logs: one line a record, JSON (default) or text, through the standard ``logging``
module; request ids; the one line each request is logged with.

Every record made while a request is being served — in its handler, in the writer job it
submitted, in the agent runs its commit started — carries that request's id (``requestId``),
because the id lives in a :class:`contextvars.ContextVar` that the writer and the agent pool
carry along; webhook attempts, sent later, find it through
:class:`toolkit.services.webhooks.attempt_log.Origins`. Nothing here logs a request's headers,
body or query string, so credentials and secrets never reach a log line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sys
import time
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from toolkit.os_random import token_hex

FORMATS = ("json", "text")
REQUEST_ID_HEADER = "x-request-id"
# A client's id is kept when it is 1–128 of these characters; otherwise one is generated (a
# log line must not carry arbitrary client bytes, nor grow without bound).
_SAFE_ID = re.compile(r"[A-Za-z0-9._:@+=/-]{1,128}")


@dataclass
class RequestInfo:
    """What the log line of one request needs beyond the ASGI scope; the handler fills in
    the workspace once the request is authenticated."""

    request_id: str
    workspace: str | None = None


current: ContextVar[RequestInfo | None] = ContextVar("collab_request", default=None)


def request_id_from(raw: bytes | None) -> str:
    """The client's ``x-request-id`` when it is safe to log, else a new one."""
    if raw is not None:
        text = raw.decode("latin-1")
        if _SAFE_ID.fullmatch(text):
            return text
    return token_hex(16)


def current_request_id() -> str | None:
    info = current.get()
    return info.request_id if info is not None else None


def note_workspace(workspace_id: str) -> None:
    """Record the authenticated workspace of the request being served (for its log line)."""
    info = current.get()
    if info is not None:
        info.workspace = workspace_id


@lru_cache(maxsize=4096)
def workspace_hash(workspace_id: str) -> str:
    """A short stable hash: enough to tell workspaces apart in logs, not to name them."""
    return hashlib.sha256(workspace_id.encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------- formatting


def fields(**values: Any) -> dict:
    """``extra=`` for a log call whose fields the formatters print as keys (JSON) or k=v (text)."""
    return {"fields": values}


@lru_cache(maxsize=4)
def _second(whole: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))


def _timestamp(record: logging.LogRecord) -> str:
    """ISO 8601 UTC with milliseconds (the second's text is cached: many lines share it)."""
    return f"{_second(int(record.created))}.{int(record.msecs):03d}Z"


def _dumps(line: dict) -> str:
    # orjson is several times faster than json (a line a request adds up); it refuses what
    # is not valid UTF-8 (a lone surrogate in an exception text), which json escapes instead.
    try:
        return orjson.dumps(line, default=str).decode()
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(line, separators=(",", ":"), default=str)  # ASCII: \ud800 escaped, still one line


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "message", ...fields, "requestId"?, "exc"?}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(getattr(record, "fields", None) or {})
        if "requestId" not in line:
            request_id = current_request_id()
            if request_id is not None:
                line["requestId"] = request_id
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return _dumps(line)


class TextFormatter(logging.Formatter):
    """``ts LEVEL logger message k=v ...`` for a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        extra = dict(getattr(record, "fields", None) or {})
        if "requestId" not in extra and current_request_id() is not None:
            extra["requestId"] = current_request_id()
        tail = "".join(f" {k}={v}" for k, v in extra.items() if v is not None)
        line = f"{_timestamp(record)} {record.levelname:<7} {record.name}: {record.getMessage()}{tail}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def configure(log_format: str = "json", level: str | int = "info", stream=None) -> logging.Handler:
    """Send every logger's records (uvicorn's too) to one handler on ``stream`` (standard
    error) in ``log_format``; returns the handler. uvicorn is then run with ``log_config=None``
    and ``access_log=False``: its access log is replaced by the request log of
    :func:`log_request` (called by :mod:`server.observe`)."""
    if log_format not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {log_format!r}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):  # uvicorn's own handlers, if any, go
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    return handler


# ---------------------------------------------------------------------------- the request log

access_log = logging.getLogger("collab.access")
# Probes and scrapes come every few seconds: their lines are DEBUG, so INFO logs show traffic.
QUIET_ROUTES = frozenset({"/healthz", "/readyz", "/metrics"})


def log_request(method: str, route: str, status: int, seconds: float, info: RequestInfo) -> None:
    """The one line of a request: its route *template* (never the raw path or query, which
    could carry ids or credentials), status, duration, a hash of its workspace and its id."""
    level = logging.DEBUG if route in QUIET_ROUTES else logging.INFO
    if access_log.isEnabledFor(level):
        access_log.log(
            level,
            "%s %s %d",
            method,
            route,
            status,
            extra=fields(
                method=method,
                route=route,
                status=status,
                durationMs=round(seconds * 1000, 2),
                workspace=workspace_hash(info.workspace) if info.workspace else None,
                requestId=info.request_id,
            ),
        )
