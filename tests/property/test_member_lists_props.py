"""Get users against a model of the lists (api-v2 §4.4, semantics §8), property-based.

Random sequences of add users (new and returning members, renamed users), delete users,
expiring and renewed permissions and renames through update users are applied to a real
DuckDB store through the service functions and to a plain Python model of each list: members in
the order they joined, a member who leaves and comes back joining at the end. After every
sequence, paging through each list with a random page size must return exactly the model's
live members, in its order, each once, with their current names — whether a page comes from
the dense window or from the general query (gaps left by departures and expiries).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.model import validate
from toolkit.model.access import AddDocuments, AddPermissions, AddUsers, DeleteUsers, GetUsers, UpdateUsers
from toolkit.services import access
from toolkit.services.context import Services
from toolkit.services.workspaces import Authenticator, create_workspace
from toolkit.store import Store

ORG, DOC = "o", "d"
USERS = [f"u{i}" for i in range(10)]
SCOPES = [{}, {"documentId": DOC}]

users = st.lists(st.sampled_from(USERS), min_size=1, max_size=6, unique=True)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(range(len(SCOPES))), users, st.integers(0, 3)),
        st.tuples(st.just("delete"), st.sampled_from(range(len(SCOPES))), users),
        st.tuples(st.just("expire"), st.sampled_from(range(len(SCOPES))), st.sampled_from(USERS)),
        st.tuples(st.just("renew"), st.sampled_from(range(len(SCOPES))), st.sampled_from(USERS)),
        st.tuples(st.just("rename"), st.sampled_from(range(len(SCOPES))), users, st.integers(0, 3)),
    ),
    min_size=1,
    max_size=14,
)


def resource(scope: int) -> dict:
    return {"type": "organization", "id": ORG} if scope == 0 else {"type": "document", "id": DOC, "organizationId": ORG}


class Model:
    def __init__(self) -> None:
        self.lists: list[list[str]] = [[] for _ in SCOPES]  # members in list order
        self.expired: list[set[str]] = [set() for _ in SCOPES]
        self.names: dict[str, str] = {}

    def join(self, scope: int, user_ids: list[str]) -> None:
        self.lists[scope] += [u for u in user_ids if u not in self.lists[scope]]

    def live(self, scope: int) -> list[tuple[str, str]]:
        return [(u, self.names[u]) for u in self.lists[scope] if u not in self.expired[scope]]


def apply(services: Services, ws, model: Model, op: tuple) -> None:
    kind, scope = op[0], op[1]
    where = {"organizationId": ORG, **SCOPES[scope]}
    if kind == "add":
        _, _, user_ids, version = op
        batch = [{"userId": u, "name": f"{u} v{version}"} for u in user_ids]
        access.add_users(services, ws, validate(AddUsers, {**where, "users": batch}))
        model.names.update({u: f"{u} v{version}" for u in user_ids})
        model.join(scope, user_ids)
        model.expired[scope] -= set(user_ids)  # re-adding sets a permanent membership
    elif kind == "delete":
        access.delete_users(services, ws, validate(DeleteUsers, {**where, "userIds": op[2]}))
        gone = set(op[2])
        for s in [0, 1] if scope == 0 else [1]:  # leaving the organization leaves its documents too
            model.lists[s] = [u for u in model.lists[s] if u not in gone]
            model.expired[s] -= gone
    elif kind in ("expire", "renew"):
        user_id = op[2]
        expiry = {"expiresAt": 1_000_000_000} if kind == "expire" else {}
        access.add_permissions(
            services,
            ws,
            validate(
                AddPermissions, {"userId": user_id, "permissions": {"resources": [{**resource(scope), **expiry}]}}
            ),
        )
        model.names.setdefault(user_id, "")
        model.join(scope, [user_id])
        (model.expired[scope].add if kind == "expire" else model.expired[scope].discard)(user_id)
    elif kind == "rename":
        _, _, user_ids, version = op
        members = [u for u in user_ids if u in model.lists[scope] and u not in model.expired[scope]]
        access.update_users(
            services,
            ws,
            validate(
                UpdateUsers, {**where, "users": [{"userId": u, "name": f"{u} renamed {version}"} for u in user_ids]}
            ),
        )
        model.names.update({u: f"{u} renamed {version}" for u in members})


def page_through(services: Services, ws, scope: int, page_size: int) -> list[tuple[str, str]]:
    out, token = [], None
    while True:
        request = {"organizationId": ORG, **SCOPES[scope], "pageSize": page_size}
        if token is not None:
            request["pageToken"] = token
        page = access.get_users(services, ws, validate(GetUsers, request))
        assert len(page["data"]) <= page_size
        out += [(u["userId"], u["name"]) for u in page["data"]]
        token = page["nextPageToken"]
        if token is None:
            return out
        assert page["data"], "a page before the last is never empty"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations, st.integers(1, 4))
def test_paging_returns_each_live_member_once_in_list_order(ops, page_size):
    with Store(":memory:") as store:
        services = Services(store)
        creds = create_workspace(store, "props", now_ms=services.clock.now())
        ws = Authenticator(store).authenticate(creds.api_key, creds.auth_token)
        access.add_documents(
            services, ws, validate(AddDocuments, {"organizationId": ORG, "documents": [{"documentId": DOC}]})
        )
        model = Model()
        for op in ops:
            apply(services, ws, model, op)
        for scope in range(len(SCOPES)):
            expected = model.live(scope)
            assert page_through(services, ws, scope, page_size) == expected
            assert page_through(services, ws, scope, 1000) == expected
        # each membership's copy of the name is the user's own
        stale = store.read(
            "SELECT m.user_id FROM memberships m JOIN users u USING (workspace_id, user_id) "
            "WHERE m.name IS DISTINCT FROM u.name OR m.email IS DISTINCT FROM u.email "
            "OR m.initial IS DISTINCT FROM u.initial"
        ).fetchall()
        assert stale == []
