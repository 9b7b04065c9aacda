"""The client methods of the API areas besides the workflow: access (tokens, permissions,
users, folders, documents, user groups), comment annotations, activity logs and agents. One
method per operation of :data:`~toolkit.services.operations.OPERATIONS`, named as its service
function; each takes the request as one dict of wire fields and/or keyword arguments
(snake_case or camelCase; ``None`` is not sent) and returns the ``result`` object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class AreaMethods:
    """Mixed into :class:`toolkit.client.WorkflowClient`, which supplies ``_op``."""

    def _op(
        self, name: str, first: Any, named: Mapping[str, Any], extra: Mapping[str, Any]
    ) -> dict:  # pragma: no cover - supplied by the client
        raise NotImplementedError

    # ------------------------------------------------------------------ tokens and permissions

    def generate_token(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/auth/generate_token: ``userId``, ``userProperties``, ``permissions``; returns ``TokenResult``."""
        return self._op("generate_token", data, {}, fields)

    def add_permissions(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/auth/permissions/add: ``userId``, ``permissions``; returns ``AccessItems``."""
        return self._op("add_permissions", data, {}, fields)

    def remove_permissions(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/auth/permissions/remove: ``userId``, ``permissions``; returns ``AccessItems``."""
        return self._op("remove_permissions", data, {}, fields)

    # ------------------------------------------------------------------ users

    def add_users(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/users/add: ``organizationId``, ``documentId``, ``folderId``, ``createOrganization``,
        ``createDocument``, ``createFolder``, ``users``; returns ``AccessItems``."""
        return self._op("add_users", data, {}, fields)

    def update_users(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/users/update: ``organizationId``, ``documentId``, ``folderId``, ``users``; returns
        ``AccessItems``."""
        return self._op("update_users", data, {}, fields)

    def delete_users(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/users/delete: ``organizationId``, ``documentId``, ``folderId``, ``userIds``; returns
        ``AccessItems``."""
        return self._op("delete_users", data, {}, fields)

    def get_users(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/users/get: ``organizationId``, ``documentId``, ``folderId``, ``userIds``,
        ``organizationUserGroupIds``, ``allDocuments``, ``groupByDocumentId``, ``pageSize``, ``pageToken``; returns
        ``UsersPage``."""
        return self._op("get_users", data, {}, fields)

    # ------------------------------------------------------------------ folders and documents

    def add_folders(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/folders/add: ``organizationId``, ``createOrganization``, ``folders``; returns ``AccessItems``."""
        return self._op("add_folders", data, {}, fields)

    def add_documents(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/documents/add: ``organizationId``, ``createOrganization``, ``folderId``, ``documents``; returns
        ``AccessItems``."""
        return self._op("add_documents", data, {}, fields)

    # ------------------------------------------------------------------ user groups and access

    def add_user_groups(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/organizations/usergroups/add: ``organizationId``, ``organizationUserGroups``; returns
        ``AccessItems``."""
        return self._op("add_user_groups", data, {}, fields)

    def add_user_group_users(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/organizations/usergroups/users/add: ``organizationId``, ``organizationUserGroupId``,
        ``userIds``; returns ``AccessItems``."""
        return self._op("add_user_group_users", data, {}, fields)

    def update_folder_access(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/organizations/folders/access/update: ``organizationId``, ``folderIds``, ``accessType``,
        ``inheritFromParent``; returns ``AccessItems``."""
        return self._op("update_folder_access", data, {}, fields)

    def update_document_access(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/organizations/documents/access/update: ``organizationId``, ``documentIds``, ``accessType``;
        returns ``AccessItems``."""
        return self._op("update_document_access", data, {}, fields)

    def update_disabled_state(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/organizations/documents/access/disablestate/update: ``organizationId``, ``documentIds``,
        ``disabled``; returns ``AccessItems``."""
        return self._op("update_disabled_state", data, {}, fields)

    # ------------------------------------------------------------------ comment annotations

    def add_annotations(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/commentannotations/add: ``organizationId``, ``documentId``, ``createOrganization``,
        ``createDocument``, ``verifyUserPermissions``, ``commentAnnotations``; returns ``AnnotationsAdded``."""
        return self._op("add_annotations", data, {}, fields)

    def get_annotations(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/commentannotations/get: ``organizationId``, ``documentId``, ``documentIds``, ``annotationIds``,
        ``userId``, ``statusIds``, ``pageSize``, ``pageToken``; returns ``AnnotationPage``."""
        return self._op("get_annotations", data, {}, fields)

    def count_annotations(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/commentannotations/count/get: ``organizationId``, ``documentIds``, ``userId``, ``statusIds``;
        returns ``AnnotationCounts``."""
        return self._op("count_annotations", data, {}, fields)

    def delete_annotations(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/commentannotations/delete: ``organizationId``, ``documentId``, ``locationIds``,
        ``annotationIds``, ``userIds``, ``agentId``, ``agentSuggestions``, ``agentUrls``; returns
        ``AnnotationsDeleted``."""
        return self._op("delete_annotations", data, {}, fields)

    def mark_read(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/commentannotations/markread: ``organizationId``, ``documentId``, ``userId``, ``annotationIds``;
        returns ``MarkedRead``."""
        return self._op("mark_read", data, {}, fields)

    # ------------------------------------------------------------------ activity logs

    def add_activities(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/activities/add: ``organizationId``, ``activities``; returns ``ActivitiesAdded``."""
        return self._op("add_activities", data, {}, fields)

    def get_activities(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/activities/get: ``organizationId``, ``documentId``, ``targetEntityId``, ``pageSize``,
        ``pageToken``; returns ``ActivityPage``."""
        return self._op("get_activities", data, {}, fields)

    def update_activities(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/activities/update: ``organizationId``, ``activities``; returns ``ActivitiesChanged``."""
        return self._op("update_activities", data, {}, fields)

    def delete_activities(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/activities/delete: ``organizationId``, ``documentId``, ``targetEntityId``, ``activityIds``;
        returns ``ActivitiesChanged``."""
        return self._op("delete_activities", data, {}, fields)

    # ------------------------------------------------------------------ agents

    def create_agent(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/agents/create: ``name``, ``description``, ``enabled``, ``instructions``, ``config``; returns
        ``AgentCreated``."""
        return self._op("create_agent", data, {}, fields)

    def get_agent(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/agents/get: ``agentId``, ``version``, ``pageSize``, ``pageToken``; returns ``AgentFetched``."""
        return self._op("get_agent", data, {}, fields)

    def update_agent(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/agents/update: ``agentId``, ``name``, ``description``, ``enabled``; returns ``AgentUpdated``."""
        return self._op("update_agent", data, {}, fields)

    def update_agent_version(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/agents/version/update: ``agentId``, ``instructions``, ``config``; returns
        ``AgentVersionUpdated``."""
        return self._op("update_agent_version", data, {}, fields)

    def validate_prompt(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> dict:
        """POST /v2/agents/prompt/validate: ``prompt``, ``provider``, ``userContextFields``; returns
        ``PromptValidated``."""
        return self._op("validate_prompt", data, {}, fields)
