"""The log line formats (`--log-format json|text`) and the request id rule."""

from __future__ import annotations

import json
import logging
import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.logs import JsonFormatter, RequestInfo, TextFormatter, configure, current, fields, request_id_from

SAFE = re.compile(r"[A-Za-z0-9._:@+=/-]{1,128}")


def record(message: str = "POST %s %d", args=("/v2/x", 200), **extra) -> logging.LogRecord:
    rec = logging.LogRecord("collab.access", logging.INFO, __file__, 1, message, args, None)
    rec.__dict__.update(fields(**extra))
    return rec


def test_json_lines_carry_the_fields_and_the_current_request_id():
    token = current.set(RequestInfo("req-1"))
    try:
        line = JsonFormatter().format(record(route="/v2/x", status=200))
    finally:
        current.reset(token)
    parsed = json.loads(line)
    assert "\n" not in line
    assert parsed["message"] == "POST /v2/x 200" and parsed["route"] == "/v2/x" and parsed["status"] == 200
    assert parsed["requestId"] == "req-1" and parsed["level"] == "info" and parsed["logger"] == "collab.access"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", parsed["ts"])


def test_an_explicit_request_id_wins_and_exceptions_stay_on_one_json_line():
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        rec = record("failed", (), requestId="origin-9")
        rec.exc_info = sys.exc_info()
    token = current.set(RequestInfo("other"))
    try:
        line = JsonFormatter().format(rec)
    finally:
        current.reset(token)
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["requestId"] == "origin-9" and "ValueError: boom" in parsed["exc"]


def test_text_lines_read_as_level_logger_message_and_key_values():
    line = TextFormatter().format(record(route="/v2/x", status=200, workspace=None, requestId="r-2"))
    assert re.fullmatch(r"\S+Z INFO    collab\.access: POST /v2/x 200 route=/v2/x status=200 requestId=r-2", line)


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="json, text"):
        configure("xml")


@given(st.binary(max_size=300))
def test_a_logged_request_id_is_always_short_and_safe(raw):
    chosen = request_id_from(raw)
    assert SAFE.fullmatch(chosen)
    if SAFE.fullmatch(raw.decode("latin-1")):
        assert chosen == raw.decode("latin-1")


def test_a_lone_surrogate_still_makes_one_line_of_utf8_json():
    line = JsonFormatter().format(record("bad \ud800 text", ()))
    assert json.loads(line.encode("utf-8"))["message"] == "bad \ud800 text"
