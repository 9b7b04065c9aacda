"""Migration 006 (member lists) on a database written before it: existing lists keep the order
they were paged in (users' creation order), every membership gets its member's name, email and
initial, and new members continue each list after its last position — never reusing one, even
after the last member leaves."""

from __future__ import annotations

import duckdb
import pytest

from toolkit.model import validate
from toolkit.model.access import AddUsers, DeleteUsers, GetUsers
from toolkit.services import access
from toolkit.services.context import Services
from toolkit.services.workspaces import Workspace
from toolkit.store import Store
from toolkit.store.migrate import migrations

WS, OTHER = "ws_old", "ws_other"
# user id -> creation number (users.seq); created in this order, added to the list in reverse
USERS = {"ann": 1, "bob": 2, "cid": 3, "dan": 4, "eve": 5}


@pytest.fixture
def old_database(tmp_path):
    """A database file at migration 005, with users and memberships as the code before 006 wrote them."""
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations (number INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMP DEFAULT now())"
    )
    for number, name, sql in migrations():
        if number < 6:
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations (number, name) VALUES (?, ?)", [number, name])
    for ws in (WS, OTHER):
        con.execute(
            "INSERT INTO workspaces (workspace_id, api_key_hash, label, jwt_secret, created_at) "
            "VALUES (?, ?, 'old', 'secret', 0)",
            [ws, "hash-" + ws],
        )
        con.execute("INSERT INTO organizations (workspace_id, organization_id) VALUES (?, 'acme')", [ws])
        con.execute("INSERT INTO documents (workspace_id, organization_id, document_id) VALUES (?, 'acme', 'd')", [ws])
        for user_id, seq in USERS.items():
            con.execute(
                "INSERT INTO users (workspace_id, user_id, id, name, email, initial, seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [ws, user_id, "usr_" + user_id, user_id.title(), f"{user_id}@{ws}.example", user_id[0].upper(), seq],
            )
        for user_id in reversed(USERS):  # added to the organization newest user first
            con.execute(
                "INSERT INTO memberships (workspace_id, user_id, resource_type, resource_id, organization_id, "
                "access_role, user_seq) VALUES (?, ?, 'organization', 'acme', 'acme', 'viewer', ?)",
                [ws, user_id, USERS[user_id]],
            )
        for user_id in ("dan", "bob"):
            con.execute(
                "INSERT INTO memberships (workspace_id, user_id, resource_type, resource_id, organization_id, "
                "access_role, user_seq) VALUES (?, ?, 'document', 'd', 'acme', 'editor', ?)",
                [ws, user_id, USERS[user_id]],
            )
    con.close()
    return path


def workspace(store: Store, workspace_id: str = WS) -> Workspace:
    return Workspace(
        *store.read(
            "SELECT workspace_id, label, dev, jwt_secret, advanced_queries FROM workspaces WHERE workspace_id = ?",
            [workspace_id],
        ).fetchone()
    )


def page_ids(services, ws, page_size: int = 2, **scope) -> list[str]:
    out, token = [], None
    while True:
        request = {"organizationId": "acme", "pageSize": page_size, **scope}
        if token:
            request["pageToken"] = token
        page = access.get_users(services, ws, validate(GetUsers, request))
        out += [u["userId"] for u in page["data"]]
        token = page["nextPageToken"]
        if token is None:
            return out


def test_existing_lists_keep_their_order_and_get_copies_of_names(old_database):
    with Store(old_database) as store:
        assert store.read("SELECT max(number) FROM schema_migrations").fetchone()[0] >= 6
        services, ws = Services(store), workspace(store)
        assert page_ids(services, ws) == list(USERS)  # creation order, as before
        assert page_ids(services, ws, documentId="d") == ["bob", "dan"]
        rows = store.read(
            "SELECT user_id, resource_type, list_pos, name, email, initial FROM memberships "
            "WHERE workspace_id = ? ORDER BY resource_type, list_pos",
            [WS],
        ).fetchall()
        assert [(r[0], r[1], r[2]) for r in rows] == [
            ("bob", "document", 1),
            ("dan", "document", 2),
            ("ann", "organization", 1),
            ("bob", "organization", 2),
            ("cid", "organization", 3),
            ("dan", "organization", 4),
            ("eve", "organization", 5),
        ]
        assert all(r[3:] == (r[0].title(), f"{r[0]}@{WS}.example", r[0][0].upper()) for r in rows)
        assert store.read(
            "SELECT resource_type, last_pos FROM member_lists WHERE workspace_id = ? ORDER BY 1", [WS]
        ).fetchall() == [("document", 2), ("organization", 5)]
        # the other workspace was migrated on its own
        assert page_ids(services, workspace(store, OTHER)) == list(USERS)


def test_new_members_continue_the_list_and_positions_are_never_reused(old_database):
    with Store(old_database) as store:
        services, ws = Services(store), workspace(store)
        add = lambda ids: access.add_users(
            services,
            ws,
            validate(
                AddUsers,
                {  # noqa: E731
                    "organizationId": "acme",
                    "users": [{"userId": u, "name": u.title()} for u in ids],
                },
            ),
        )
        add(["zed", "bob"])  # bob is already a member: he keeps his place
        assert page_ids(services, ws) == [*USERS, "zed"]
        access.delete_users(services, ws, validate(DeleteUsers, {"organizationId": "acme", "userIds": ["zed"]}))
        add(["yan"])  # after zed's position, though zed has gone
        assert store.read(
            "SELECT user_id, list_pos FROM memberships WHERE workspace_id = ? AND list_pos > 5 "
            "AND resource_type = 'organization'",
            [WS],
        ).fetchall() == [("yan", 7)]
        assert page_ids(services, ws, page_size=3) == [*USERS, "yan"]
