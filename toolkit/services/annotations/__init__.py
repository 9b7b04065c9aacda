"""Comment annotations in process: add, get, count, delete, mark read (api-v2 §4.12–4.14,
semantics §9). Every function takes ``(services, workspace, request)`` and returns the
JSON-ready ``{status, message, data}`` result."""

from toolkit.services.annotations.read import count_annotations, get_annotations
from toolkit.services.annotations.urls import normalise_page_url
from toolkit.services.annotations.write import add_annotations, delete_annotations, mark_read

__all__ = [
    "add_annotations",
    "get_annotations",
    "count_annotations",
    "delete_annotations",
    "mark_read",
    "normalise_page_url",
]
