"""Both clients of toolkit.client cover every operation the server publishes in /openapi.json,
and the methods of the areas besides the workflow (users, annotations, activities, agents)
give the same results in process and over HTTP against a real `collab serve`."""

from __future__ import annotations

import re

import httpx

from toolkit.client import HttpClient, LocalClient
from toolkit.errors import ApiError
from toolkit.services.openapi import openapi_document

NOT_OPERATIONS = {"call", "iter_events", "close", "open"}


def _method_names(cls) -> list[str]:
    return sorted(
        n for n in dir(cls) if not n.startswith("_") and n not in NOT_OPERATIONS and callable(getattr(cls, n))
    )


def _call_each_method(client) -> None:
    """Every operation method once with an empty request (refused or read-only: nothing changes)."""
    for name in _method_names(type(client)):
        try:
            getattr(client, name)({})
        except ApiError:
            pass


def test_http_client_has_a_method_for_every_operation_the_server_serves(server):
    published = httpx.get(f"{server.base_url}/openapi.json", timeout=30).json()["paths"]
    posted: list[str] = []
    hooks = {"request": [lambda request: posted.append(request.url.path)]}
    creds = server.creds_b
    with HttpClient(server.base_url, creds["apiKey"], creds["authToken"], event_hooks=hooks) as client:
        _call_each_method(client)
    assert sorted(posted) == sorted(published)  # every path once: one method per operation, none left over


class _Recording(LocalClient):
    """A LocalClient that also notes the path of each operation it runs."""

    def _call(self, op, data):
        self.paths.append(op.path)
        return super()._call(op, data)


def test_local_client_has_a_method_for_every_operation_of_the_document():
    with _Recording.open() as client:
        client.paths = []
        _call_each_method(client)
    assert sorted(client.paths) == sorted(openapi_document()["paths"])
    assert _method_names(LocalClient) == _method_names(HttpClient)


_GENERATED = re.compile(r"\b(usr|ann|act|agt|ag)_[0-9a-z]{8,}\b|\b\d{13}\b")


def areas(client) -> list:
    """Users, a comment annotation, an activity and an agent through the clients' methods."""
    org, doc = "org-clients", "doc-clients"
    return [
        client.add_users(
            organization_id=org,
            create_organization=True,
            users=[{"userId": "ann", "name": "Ann", "email": "ann@example.com"}],
        ),
        client.get_users({"organizationId": org}),
        client.add_annotations(
            organization_id=org,
            document_id=doc,
            create_document=True,
            comment_annotations=[
                {
                    "annotationId": "a-1",
                    "commentData": [{"commentHtml": "<p>tighten this</p>", "from": {"userId": "ann"}}],
                }
            ],
        ),
        client.count_annotations(organization_id=org, document_ids=[doc], user_id="ann"),
        client.add_activities(
            organization_id=org, activities=[{"id": "act-1", "featureType": "comment", "actionType": "comment.add"}]
        ),
        client.create_agent(name="Clients summariser", description="a test agent"),
    ]


def test_area_methods_answer_the_same_in_process_and_over_http(server):
    creds = server.creds_b
    with LocalClient.open() as local, HttpClient(server.base_url, creds["apiKey"], creds["authToken"]) as remote:
        here, there = areas(local), areas(remote)
    normalise = lambda results: _GENERATED.sub("<id>", repr(results))  # noqa: E731 - ids and times differ
    assert normalise(here) == normalise(there)
    assert here[1]["data"][0]["userId"] == "ann"
