"""The OpenAPI 3.1 document of the API (the server serves it at ``GET /openapi.json``),
generated from the operations table and the same pydantic models that validate requests, so
the published contract cannot drift from the code.

>>> doc = openapi_document()
>>> doc["openapi"], doc["paths"]["/v2/users/add"]["post"]["operationId"]
('3.1.0', 'users_add')
"""

from __future__ import annotations

import inspect
from functools import lru_cache

from pydantic.json_schema import models_json_schema

from toolkit.services.operations import OPERATIONS, Operation

_CODES = [
    "INVALID_ARGUMENT",
    "FAILED_PRECONDITION",
    "UNAUTHENTICATED",
    "PERMISSION_DENIED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "ABORTED",
    "RESOURCE_EXHAUSTED",
    "INTERNAL",
    "UNAVAILABLE",
]


def _error_schema(codes: list[str]) -> dict:
    return {
        "type": "object",
        "required": ["error"],
        "additionalProperties": False,
        "properties": {
            "error": {
                "type": "object",
                "required": ["message", "status"],
                "additionalProperties": False,
                "properties": {"message": {"type": "string"}, "status": {"type": "string", "enum": codes}},
            }
        },
    }


# Each HTTP status with the error codes it carries (semantics §1), so a checker can tell a
# NOT_FOUND sent as 400 from a right answer. 413 is the body-size limit, 500 a bug.
_ERROR_RESPONSES = {
    "400": (
        ["INVALID_ARGUMENT", "FAILED_PRECONDITION"],
        "invalid request (schema, rule, unwrapped or malformed body) or a state that forbids the call",
    ),
    "401": (["UNAUTHENTICATED"], "missing or wrong x-service-api-key / x-service-auth-token"),
    "403": (["PERMISSION_DENIED"], "reviewer action by an actorId not in the reviewer list"),
    "404": (["NOT_FOUND"], "the named resource does not exist in this workspace"),
    "409": (["ALREADY_EXISTS", "ABORTED"], "the id is already in use"),
    "413": (["INVALID_ARGUMENT"], "the body is larger than the server's limit (default 1 MiB)"),
    "500": (["INTERNAL"], "an internal error (always a server bug)"),
    "503": (["UNAVAILABLE"], "the configured language-model provider failed"),
}
_EVERYWHERE = ("400", "401", "404", "413", "500")


def _error_responses(op: Operation) -> dict:
    """The common statuses, and those carrying one of the operation's own error codes."""
    return {
        status: {"description": description, "content": {"application/json": {"schema": _error_schema(codes)}}}
        for status, (codes, description) in _ERROR_RESPONSES.items()
        if status in _EVERYWHERE or set(codes) & set(op.errors)
    }


_ALWAYS = (
    "Rules JSON Schema cannot state are answered INVALID_ARGUMENT naming the field: an integer is "
    "written without a fraction (2, not 2.0), a page token or cursor is one this API returned, and "
    "on a server whose database is PostgreSQL a text kept as text (an id, a name, a comment) may "
    "not contain the NUL character U+0000 (inside free-form JSON objects it may). "
    "FAILED_PRECONDITION is a state that forbids the call."
)


def _rules(model) -> str:
    """The operation's description: the request model's docstring (the rules its schema cannot
    say, each model stating its own) and what holds for every operation."""
    own = inspect.cleandoc(model.__doc__) if model is not None and model.__doc__ else ""
    return f"{own}\n\n{_ALWAYS}" if own else _ALWAYS


@lru_cache(maxsize=1)
def openapi_document() -> dict:
    models = {m for e in OPERATIONS for m in (e.schema, e.result)}
    refs, schema = models_json_schema(
        [
            (m, "validation" if m in {e.schema for e in OPERATIONS} else "serialization")
            for m in sorted(models, key=lambda m: m.__name__)
        ],
        by_alias=True,
        ref_template="#/components/schemas/{model}",
    )
    components = dict(schema.get("$defs", {}))
    components["Error"] = _error_schema(_CODES)
    paths = {}
    for e in OPERATIONS:
        request_ref = refs[(e.schema, "validation")]
        result_ref = refs[(e.result, "serialization")]
        paths[e.path] = {
            "post": {
                "operationId": e.path.removeprefix("/v2/").replace("/", "_"),
                "description": _rules(e.schema),
                "security": [{"apiKey": [], "authToken": []}],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["data"],
                                "additionalProperties": False,
                                "properties": {"data": request_ref},
                            }
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "success",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["result"],
                                    "additionalProperties": False,
                                    "properties": {"result": result_ref},
                                }
                            }
                        },
                    },
                    **_error_responses(e),
                },
            }
        }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Collaboration Backend REST API", "version": "2"},
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "apiKey": {"type": "apiKey", "in": "header", "name": "x-service-api-key"},
                "authToken": {"type": "apiKey", "in": "header", "name": "x-service-auth-token"},
            },
        },
    }
