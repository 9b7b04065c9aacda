"""GET /openapi.json: an OpenAPI 3.1 document generated from the same pydantic models that
validate requests, so the published contract cannot drift from the code."""

from __future__ import annotations

from functools import lru_cache

from pydantic.json_schema import models_json_schema

from server.routes import ROUTES

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "object", "required": ["message", "status"], "properties": {
        "message": {"type": "string"},
        "status": {"type": "string", "enum": ["INVALID_ARGUMENT", "FAILED_PRECONDITION", "UNAUTHENTICATED",
                                              "PERMISSION_DENIED", "NOT_FOUND", "ALREADY_EXISTS", "ABORTED",
                                              "RESOURCE_EXHAUSTED", "INTERNAL", "UNAVAILABLE"]}}}},
}


@lru_cache(maxsize=1)
def openapi_document() -> dict:
    models = {m for e in ROUTES for m in (e.schema, e.result)}
    refs, schema = models_json_schema([(m, "validation" if m in {e.schema for e in ROUTES} else "serialization")
                                       for m in sorted(models, key=lambda m: m.__name__)],
                                      by_alias=True, ref_template="#/components/schemas/{model}")
    components = dict(schema.get("$defs", {}))
    components["Error"] = _ERROR
    paths = {}
    for e in ROUTES:
        request_ref = refs[(e.schema, "validation")]
        result_ref = refs[(e.result, "serialization")]
        paths[e.path] = {"post": {
            "operationId": e.path.removeprefix("/v2/").replace("/", "_"),
            "security": [{"apiKey": [], "authToken": []}],
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["data"], "additionalProperties": False,
                "properties": {"data": request_ref}}}}},
            "responses": {
                "200": {"description": "success", "content": {"application/json": {"schema": {
                    "type": "object", "required": ["result"], "properties": {"result": result_ref}}}}},
                "default": {"description": "error", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Error"}}}},
            },
        }}
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
