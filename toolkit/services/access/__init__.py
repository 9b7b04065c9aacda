"""The access API in process: tokens, permissions, users, user groups, folders, documents
and effective access (api-v2 §4.1–4.4, §4.17, §4.18; semantics §8). Every endpoint function
takes ``(services, workspace, request)`` where ``request`` is the validated request model, and
returns the result as a JSON-ready dict."""

from toolkit.services.access.effective import effective_role, effective_roles
from toolkit.services.access.organizations import (
    add_documents,
    add_folders,
    add_user_group_users,
    add_user_groups,
    update_disabled_state,
    update_document_access,
    update_folder_access,
)
from toolkit.services.access.tokens import add_permissions, generate_token, remove_permissions
from toolkit.services.access.user_pages import get_users
from toolkit.services.access.users import add_users, delete_users, update_users

__all__ = [
    "generate_token",
    "add_permissions",
    "remove_permissions",
    "add_users",
    "update_users",
    "delete_users",
    "get_users",
    "add_folders",
    "add_documents",
    "update_folder_access",
    "update_document_access",
    "update_disabled_state",
    "add_user_groups",
    "add_user_group_users",
    "effective_role",
    "effective_roles",
]
