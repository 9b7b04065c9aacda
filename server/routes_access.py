"""Routes for tokens, permissions, organizations, folders, documents, users and user groups
(api-v2 §4.1–4.4, §4.17, §4.18; semantics §8)."""

from __future__ import annotations

from server.routes import Endpoint
from toolkit.model import access as m
from toolkit.services import access

ACCESS_ROUTES: list[Endpoint] = [
    Endpoint("/v2/auth/generate_token", m.GenerateToken, access.generate_token, m.TokenResult, m.GenerateToken),
    Endpoint("/v2/auth/permissions/add", m.AddPermissions, access.add_permissions, m.AccessItems, m.AddPermissions),
    Endpoint("/v2/auth/permissions/remove", m.RemovePermissions, access.remove_permissions, m.AccessItems,
             m.RemovePermissions),
    Endpoint("/v2/users/add", m.AddUsers, access.add_users, m.AccessItems, m.AddUsers),
    Endpoint("/v2/users/update", m.UpdateUsers, access.update_users, m.AccessItems, m.UpdateUsers),
    Endpoint("/v2/users/delete", m.DeleteUsers, access.delete_users, m.AccessItems, m.DeleteUsers),
    Endpoint("/v2/users/get", m.GetUsers, access.get_users, m.UsersPage, m.GetUsers),
    Endpoint("/v2/folders/add", m.AddFolders, access.add_folders, m.AccessItems, m.AddFolders),
    Endpoint("/v2/documents/add", m.AddDocuments, access.add_documents, m.AccessItems, m.AddDocuments),
    Endpoint("/v2/organizations/usergroups/add", m.AddUserGroups, access.add_user_groups, m.AccessItems,
             m.AddUserGroups),
    Endpoint("/v2/organizations/usergroups/users/add", m.AddUserGroupUsers, access.add_user_group_users,
             m.AccessItems, m.AddUserGroupUsers),
    Endpoint("/v2/organizations/folders/access/update", m.UpdateFolderAccess, access.update_folder_access,
             m.AccessItems, m.UpdateFolderAccess),
    Endpoint("/v2/organizations/documents/access/update", m.UpdateDocumentAccess, access.update_document_access,
             m.AccessItems, m.UpdateDocumentAccess),
    Endpoint("/v2/organizations/documents/access/disablestate/update", m.UpdateDisabledState,
             access.update_disabled_state, m.AccessItems, m.UpdateDisabledState),
]
