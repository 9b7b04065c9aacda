"""Opaque cursors: callers cannot read or forge meaning into them, but we can decode them."""

from __future__ import annotations

import base64

from toolkit.errors import ApiError, ErrorCode


def encode_cursor(key: int) -> str:
    return base64.urlsafe_b64encode(f"k{key}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, field: str = "cursor") -> int | None:
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if not text.startswith("k"):
            raise ValueError
        return int(text[1:])
    except (ValueError, UnicodeDecodeError):
        raise ApiError(ErrorCode.INVALID_ARGUMENT, f"data.{field}: not a cursor this API returned") from None
