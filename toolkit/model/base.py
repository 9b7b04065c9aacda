"""Shared pydantic configuration and error formatting for every API model."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from toolkit.errors import ApiError, ErrorCode, listed


class ApiModel(BaseModel):
    """Strict, closed request/response model: camelCase on the wire, snake_case in Python.

    Strict so that ``"true"`` is not a boolean and ``"5"`` is not an integer; closed
    (``extra='forbid'``) so that a misspelt key is an error naming the key.
    """

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=False,
    )

    def dump(self) -> dict[str, Any]:
        """JSON-ready dict with wire (camelCase) names, without unset optional fields."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


class OpenModel(ApiModel):
    """A model whose named fields are validated while other keys are kept (node configs)."""

    model_config = ConfigDict(extra="allow")


# Ids of nodes and groups (semantics §3): `__` is reserved as the step-id separator.
ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"


def _no_double_underscore(value: str) -> str:
    if "__" in value:
        raise ValueError("ids must not contain '__' (it separates the parts of step ids)")
    return value


Identifier = Annotated[str, StringConstraints(pattern=ID_PATTERN), AfterValidator(_no_double_underscore)]
JsonObject = dict[str, Any]

# Prefix of the tags pydantic inserts into error locations for the node union; never shown.
NODE_TAG = "node-type:"


def _loc_to_path(loc: tuple, prefix: str) -> str:
    parts = [prefix] if prefix else []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif isinstance(item, str) and item.startswith(NODE_TAG):
            continue
        elif item.startswith("function-"):
            continue
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts) or "data"


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == "missing":
        return "field required"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "model_type" and error["msg"].endswith("EdgeEndpoint"):
        return "must be a node id string, {kind: node, nodeId} or {kind: group, groupId}"
    msg = error["msg"]
    msg = re.sub(r"^(Value|Assertion) error, ", "", msg)
    return msg[:1].lower() + msg[1:]


_NAMED = re.compile(r"^((?:[A-Za-z][\w-]*|\[\d+\])(?:\.[A-Za-z][\w-]*|\[\d+\])*): (.*)$", re.S)


def describe_errors(exc: ValidationError, prefix: str = "data") -> list[tuple[str, str]]:
    """(field path, message) for every error, e.g. ``("data.nodes[2].config.agentId", "field required")``."""
    out = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        message = _message(error)
        if error["type"] == "node_type" and not isinstance(error.get("input"), dict):
            # Not an object at all: there is no `type` field to name.
            message = "input should be a valid object"
        elif error["type"] == "node_type":
            # A node's type picks its config model; name the field rather than the union.
            loc, message = loc + ("type",), message.removeprefix("type: ")
            if "type" not in error["input"]:
                message = "field required"
        path = _loc_to_path(loc, prefix)
        # Validators on a parent model name the field at fault as "field.path[i].sub: message"
        # (a path relative to the model; "[i].sub" when the validator sits on a list field).
        named = _NAMED.match(message)
        if error["type"] == "value_error" and named:
            field = named.group(1)
            path, message = f"{path}{'' if field.startswith('[') else '.'}{field}", named.group(2)
        out.append((path, message))
    return out


def invalid_argument(exc: ValidationError, prefix: str = "data") -> ApiError:
    """One ApiError naming every invalid field, the first one leading."""
    described = describe_errors(exc, prefix)
    text = listed((f"{path}: {msg}" for path, msg in described), "; ")
    return ApiError(ErrorCode.INVALID_ARGUMENT, text)


def validate(model: type[BaseModel], data: Any, prefix: str = "data"):
    """Validate ``data`` into ``model`` or raise ``ApiError(INVALID_ARGUMENT)`` naming the fields.

    >>> from toolkit.model.definition import Trigger
    >>> validate(Trigger, {"triggerId": ""})
    Traceback (most recent call last):
    ...
    toolkit.errors.ApiError: data.triggerId: string should have at least 1 character
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_argument(exc, prefix) from None


# ---------------------------------------------------------------- cross-field rules in JSON Schema


def refuse_repeats(field: str, values: list[str], what: str, key: str = "") -> None:
    """Name the first repeat down to its field, in the one wording the operation descriptions
    document: ``users[2].userId: userId 'u' is given more than once (also users[0])``."""
    first: dict[str, int] = {}
    for index, value in enumerate(values):
        if value in first:
            raise ValueError(
                f"{field}[{index}]{key}: {what} {value!r} is given more than once (also {field}[{first[value]}])"
            )
        first[value] = index


def present(*names: str) -> dict:
    """JSON Schema: every field in ``names`` is given and not null (null counts as absent here)."""
    return {"required": list(names), "properties": {n: {"not": {"type": "null"}} for n in names}}


def absent(*names: str) -> dict:
    """JSON Schema: none of ``names`` is given (or each is null)."""
    return {"not": {"anyOf": [present(n) for n in names]}} if len(names) > 1 else {"not": present(names[0])}


def when(field: str, value: Any, then: dict, otherwise: dict | None = None) -> dict:
    """JSON Schema: ``then`` applies when ``field`` is given as ``value`` (else ``otherwise``)."""
    rule = {"if": {"required": [field], "properties": {field: {"const": value}}}, "then": then}
    return rule if otherwise is None else {**rule, "else": otherwise}


def schema_rules(*rules: dict):
    """A ``json_schema_extra`` adding ``rules`` (JSON Schema objects) to a model's schema as
    ``allOf``, so /openapi.json states the cross-field rules the model's validators enforce."""

    def extra(schema: dict, model: Any = None) -> None:
        schema.setdefault("allOf", []).extend(rules)

    return extra
