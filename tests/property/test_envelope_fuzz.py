"""Fuzzing the envelope in-process, with many examples: any bytes a client can send are either
the `data` object of a well-formed body or INVALID_ARGUMENT saying what is wrong with the
body (semantics §1); and any `data` object is either a valid request of the endpoint's model
or INVALID_ARGUMENT naming the field. The same over real HTTP, fewer examples:
tests/api/test_fuzz_envelope.py."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolkit.errors import ApiError, ErrorCode
from toolkit.model import validate
from toolkit.services.envelope import MAX_DEPTH, parse_data
from toolkit.services.operations import OPERATIONS

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**64, max_value=2**90)
    | st.floats()
    | st.text(max_size=10)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)


def envelope_outcome(raw: bytes):
    """parse_data's answer: the data object, or the INVALID_ARGUMENT message."""
    try:
        data = parse_data(raw)
    except ApiError as err:
        assert err.code is ErrorCode.INVALID_ARGUMENT, err
        assert err.message.startswith(("body", "data")), err.message  # it says where
        return err
    assert isinstance(data, dict)
    return data


@FUZZ
@given(st.binary(max_size=400))
def test_any_bytes_are_data_or_invalid_argument(raw):
    envelope_outcome(raw)


@FUZZ
@given(json_values, st.sampled_from(["utf-8", "utf-16", "latin-1"]))
@example({"": None, "data": None}, "utf-8")  # an unknown top-level key, empty: still named
@example({"data": {}, "x": "\ud800"}, "utf-8")
def test_any_json_body_is_data_or_invalid_argument(body, encoding):
    raw = json.dumps(body).encode(encoding, errors="replace")
    outcome = envelope_outcome(raw)
    if isinstance(outcome, dict):  # only a {"data": {...}} body gets through, and unchanged
        assert encoding != "utf-16" and body == {"data": outcome}


@FUZZ
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=4), st.integers(0, 400), st.binary(max_size=8))
def test_damaged_wrapped_bodies_are_data_or_invalid_argument(data, at, junk):
    raw = json.dumps({"data": data}).encode()
    envelope_outcome(raw[:at] + junk + raw[at:])


@pytest.mark.parametrize("depth", [MAX_DEPTH - 2, MAX_DEPTH, 1_000, 100_000])
@pytest.mark.parametrize("open_, close", [("[", "]"), ('{"a":', "}")])
def test_nesting_beyond_the_limit_is_invalid_argument(depth, open_, close):
    raw = ('{"data": {"x": ' + open_ * depth + "1" + close * depth + "}}").encode()
    outcome = envelope_outcome(raw)
    if depth + 2 <= MAX_DEPTH:
        assert isinstance(outcome, dict)
    else:
        assert isinstance(outcome, ApiError)


REQUEST_MODELS = {e.path: e.request for e in OPERATIONS if e.request is not None}


FIELDS = {
    path: sorted(model.model_json_schema(by_alias=True).get("properties", {})) for path, model in REQUEST_MODELS.items()
}


@st.composite
def requests(draw):
    """An endpoint and a `data` object for it, its keys mostly the model's own field names."""
    path = draw(st.sampled_from(sorted(REQUEST_MODELS)))
    keys = st.sampled_from(FIELDS[path]) | st.text(max_size=6) if FIELDS[path] else st.text(max_size=6)
    return path, draw(st.dictionaries(keys, json_values, max_size=6))


@FUZZ
@given(requests())
def test_any_data_object_is_a_request_or_invalid_argument(request):
    path, data = request
    try:
        validate(REQUEST_MODELS[path], data)
    except ApiError as err:
        assert err.code is ErrorCode.INVALID_ARGUMENT, (path, err)
        assert err.message.startswith("data"), (path, err.message)


@pytest.mark.parametrize("key", ["", "date", "Data", "\ud800"])
def test_an_unknown_top_level_key_is_named_quoted(key):
    raw = json.dumps({"data": {}, key: 1}).encode()
    outcome = envelope_outcome(raw)
    assert isinstance(outcome, ApiError)
    assert outcome.message.startswith(f"body: unknown field {json.dumps(key)} "), outcome.message
