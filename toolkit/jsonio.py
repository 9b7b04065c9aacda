"""Compact JSON text for everything we store: events, step outputs, engine states.

orjson does this about ten times faster than the standard library, which matters in the
simulator's hot loop and on the server's write path. Its one gap — integers beyond 64 bits,
which a client may legally send inside free-form objects — falls back to :mod:`json`, so
storing never fails on valid JSON. Both produce the same compact form
(``separators=(",", ":")``, UTF-8 kept as is).

>>> dumps({"b": 1, "a": [True, None, "é"]})
'{"b":1,"a":[true,null,"é"]}'
>>> dumps({"big": 2 ** 70})
'{"big":1180591620717411303424}'
"""

from __future__ import annotations

import json

import orjson


def dumps(value) -> str:
    return encode(value).decode("utf-8")


def encode(value) -> bytes:
    """:func:`dumps` as UTF-8 bytes, what an HTTP answer sends (no decoding and encoding again).

    >>> encode({"é": [1.5, 2 ** 70]})
    b'{"\\xc3\\xa9":[1.5,1180591620717411303424]}'
    """
    try:
        return orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
