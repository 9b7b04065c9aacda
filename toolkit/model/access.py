"""Requests and results of the access endpoints: tokens, permissions, users, user groups,
folders and documents (api-v2 §2.1–2.3, §4.1–4.4, §4.17, §4.18; semantics §8)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, PlainValidator, StringConstraints, WithJsonSchema, model_validator

from toolkit.model.base import ApiModel, absent, present, refuse_repeats, schema_rules, when

# Client ids of organizations, folders, documents, users and groups.
ResourceId = Annotated[str, StringConstraints(min_length=1, max_length=256)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=256)]
Email = Annotated[str, StringConstraints(pattern=r"^[^@\s]+@[^@\s]+$", max_length=320)]
Initial = Annotated[str, StringConstraints(min_length=1, max_length=8)]
AccessRole = Literal["viewer", "editor"]
AccessType = Literal["organizationPrivate", "restricted", "public"]
ResourceType = Literal["organization", "document", "folder"]
MAX_UNIX_SECONDS = 253_402_300_799  # the last second of year 9999


def _unix_seconds(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a number (a Unix timestamp in seconds)")
    if not 0 <= value <= MAX_UNIX_SECONDS:
        raise ValueError(f"must be a Unix timestamp in seconds between 0 and {MAX_UNIX_SECONDS}")
    return value


# Unix seconds (api-v2 §2.1; semantics §1): an integer or a fraction, kept exactly as sent.
UnixSeconds = Annotated[
    Any, PlainValidator(_unix_seconds), WithJsonSchema({"type": "number", "minimum": 0, "maximum": MAX_UNIX_SECONDS})
]

MAX_ITEMS = 1000


_Ids = Annotated[list[ResourceId], Field(min_length=1, max_length=MAX_ITEMS)]
_FewIds = Annotated[list[ResourceId], Field(min_length=1, max_length=30)]  # what one users page can name


# ------------------------------------------------------------------ tokens and permissions


class PermissionResource(ApiModel):
    """A resource permission (api-v2 §2.1) as sent to generate token and add permissions.
    ``organizationId`` equals ``id`` when ``type`` is organization (or is omitted)."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            {"if": {"properties": {"type": {"not": {"const": "organization"}}}}, "then": present("organizationId")}
        )
    )

    type: ResourceType
    id: ResourceId
    organization_id: ResourceId | None = None
    access_role: AccessRole = "editor"
    expires_at: UnixSeconds | None = None

    @model_validator(mode="after")
    def _organization(self):
        if self.type != "organization" and self.organization_id is None:
            raise ValueError(f"organizationId: required when type is {self.type}")
        if self.type == "organization" and self.organization_id not in (None, self.id):
            raise ValueError("organizationId: must equal id when type is organization (or be omitted)")
        return self

    @property
    def organization(self) -> str:
        return self.id if self.type == "organization" else self.organization_id  # type: ignore[return-value]

    def claim(self) -> dict[str, Any]:
        """The resource as carried in the token: as sent, defaults applied."""
        out: dict[str, Any] = {"type": self.type, "id": self.id}
        if self.organization_id is not None:
            out["organizationId"] = self.organization_id
        out["accessRole"] = self.access_role
        if self.expires_at is not None:
            out["expiresAt"] = self.expires_at
        return out


class Permissions(ApiModel):
    resources: Annotated[list[PermissionResource], Field(min_length=1, max_length=MAX_ITEMS)]


class UserProperties(ApiModel):
    is_admin: bool = False
    name: Name
    email: Email

    @model_validator(mode="before")
    @classmethod
    def _no_organization(cls, data: Any) -> Any:
        if isinstance(data, dict) and "organizationId" in data:
            raise ValueError(
                "organizationId: must not be placed in userProperties; give the organization "
                "as a permissions.resources entry of type organization"
            )
        return data


class GenerateToken(ApiModel):
    """One of ``permissions.resources`` is the organization (``type: organization``); an
    entry of type organization has ``organizationId`` equal to its ``id`` or none."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            {
                "properties": {
                    "permissions": {
                        "properties": {
                            "resources": {
                                "contains": {"required": ["type"], "properties": {"type": {"const": "organization"}}}
                            }
                        }
                    }
                }
            }
        )
    )

    user_id: ResourceId
    user_properties: UserProperties
    permissions: Permissions

    @model_validator(mode="after")
    def _organization_entry(self):
        if not any(r.type == "organization" for r in self.permissions.resources):
            raise ValueError(
                "permissions.resources: the organization must be given as a resource entry of type organization"
            )
        return self


class AddPermissions(ApiModel):
    """No resource ``id`` is given twice in ``permissions.resources``; an entry of type
    organization has ``organizationId`` equal to its ``id`` or none."""

    user_id: ResourceId
    permissions: Permissions

    @model_validator(mode="after")
    def _unique_ids(self):
        refuse_repeats("permissions.resources", [r.id for r in self.permissions.resources], "resource id", ".id")
        return self


class RemovedResource(ApiModel):
    """``organizationId`` equals ``id`` when ``type`` is organization (or is omitted)."""

    model_config = ConfigDict(json_schema_extra=schema_rules(when("type", "document", present("organizationId"))))

    type: ResourceType
    id: ResourceId
    organization_id: ResourceId | None = None

    @model_validator(mode="after")
    def _organization(self):
        if self.type == "document" and self.organization_id is None:
            raise ValueError("organizationId: required when type is document")
        if self.type == "organization" and self.organization_id not in (None, self.id):
            raise ValueError("organizationId: must equal id when type is organization (or be omitted)")
        return self


class RemovedPermissions(ApiModel):
    resources: Annotated[list[RemovedResource], Field(min_length=1, max_length=MAX_ITEMS)]


class RemovePermissions(ApiModel):
    """No resource ``id`` is given twice in ``permissions.resources``; an entry of type
    organization has ``organizationId`` equal to its ``id`` or none."""

    user_id: ResourceId
    permissions: RemovedPermissions

    @model_validator(mode="after")
    def _unique_ids(self):
        refuse_repeats("permissions.resources", [r.id for r in self.permissions.resources], "resource id", ".id")
        return self


# ------------------------------------------------------------------ users

_EITHER = {"not": present("documentId", "folderId")}


def _unique_items(*names: str) -> dict:
    return {"properties": {n: {"uniqueItems": True} for n in names}}


class _Scoped(ApiModel):
    """``organizationId`` plus at most one of ``documentId`` / ``folderId``."""

    model_config = ConfigDict(json_schema_extra=schema_rules(_EITHER))

    organization_id: ResourceId
    document_id: ResourceId | None = None
    folder_id: ResourceId | None = None

    @model_validator(mode="after")
    def _either(self):
        if self.document_id is not None and self.folder_id is not None:
            raise ValueError("folderId: give either documentId or folderId, not both")
        return self


class UserInput(ApiModel):
    """A user as sent to add users (api-v2 §2.2)."""

    user_id: ResourceId
    name: Name | None = None
    email: Email | None = None
    access_role: AccessRole = "editor"
    initial: Initial | None = None


class AddUsers(_Scoped):
    """No ``userId`` is given twice in ``users``."""

    create_organization: bool | None = None
    create_document: bool | None = None
    create_folder: bool | None = None
    users: Annotated[list[UserInput], Field(min_length=1, max_length=MAX_ITEMS)]

    @model_validator(mode="after")
    def _unique_users(self):
        refuse_repeats("users", [u.user_id for u in self.users], "userId", ".userId")
        return self


class UserChange(ApiModel):
    user_id: ResourceId
    name: Name | None = None
    email: Email | None = None
    access_role: AccessRole | None = None
    initial: Initial | None = None


class UpdateUsers(_Scoped):
    """No ``userId`` is given twice in ``users``."""

    users: Annotated[list[UserChange], Field(min_length=1, max_length=MAX_ITEMS)]

    @model_validator(mode="after")
    def _unique_users(self):
        refuse_repeats("users", [u.user_id for u in self.users], "userId", ".userId")
        return self


class DeleteUsers(_Scoped):
    model_config = ConfigDict(json_schema_extra=schema_rules(_EITHER, _unique_items("userIds")))

    user_ids: _Ids

    @model_validator(mode="after")
    def _unique_users(self):
        refuse_repeats("userIds", self.user_ids, "userId")
        return self


class GetUsers(_Scoped):
    model_config = ConfigDict(
        json_schema_extra=schema_rules(_EITHER, when("allDocuments", True, absent("documentId", "folderId")))
    )

    user_ids: _FewIds | None = None
    organization_user_group_ids: _FewIds | None = None
    all_documents: bool = False
    group_by_document_id: bool = False
    page_size: Annotated[int, Field(ge=1, le=1000)] = 1000
    page_token: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None

    @model_validator(mode="after")
    def _all_documents(self):
        if self.all_documents and self.document_id is not None:
            raise ValueError("documentId: not allowed with allDocuments (it already covers every document)")
        if self.all_documents and self.folder_id is not None:
            raise ValueError("folderId: not allowed with allDocuments")
        return self


# ------------------------------------------------------------------ user groups


class UserGroupInput(ApiModel):
    group_id: ResourceId
    group_name: Name


class AddUserGroups(ApiModel):
    """No ``groupId`` is given twice in ``organizationUserGroups``."""

    organization_id: ResourceId
    organization_user_groups: Annotated[list[UserGroupInput], Field(min_length=1, max_length=MAX_ITEMS)]

    @model_validator(mode="after")
    def _unique_groups(self):
        refuse_repeats(
            "organizationUserGroups", [g.group_id for g in self.organization_user_groups], "groupId", ".groupId"
        )
        return self


class AddUserGroupUsers(ApiModel):
    model_config = ConfigDict(json_schema_extra=schema_rules(_unique_items("userIds")))

    organization_id: ResourceId
    organization_user_group_id: ResourceId
    user_ids: _Ids

    @model_validator(mode="after")
    def _unique_users(self):
        refuse_repeats("userIds", self.user_ids, "userId")
        return self


# ------------------------------------------------------------------ folders and documents


class FolderInput(ApiModel):
    folder_id: ResourceId
    folder_name: Name | None = None
    parent_folder_id: ResourceId | None = None


class AddFolders(ApiModel):
    """No ``folderId`` is given twice in ``folders``."""

    organization_id: ResourceId
    create_organization: bool | None = None
    folders: Annotated[list[FolderInput], Field(min_length=1, max_length=MAX_ITEMS)]

    @model_validator(mode="after")
    def _unique_folders(self):
        refuse_repeats("folders", [f.folder_id for f in self.folders], "folderId", ".folderId")
        return self


class DocumentInput(ApiModel):
    document_id: ResourceId
    document_name: Name | None = None


class AddDocuments(ApiModel):
    """No ``documentId`` is given twice in ``documents``."""

    organization_id: ResourceId
    create_organization: bool | None = None
    folder_id: ResourceId | None = None
    documents: Annotated[list[DocumentInput], Field(min_length=1, max_length=MAX_ITEMS)]

    @model_validator(mode="after")
    def _unique_documents(self):
        refuse_repeats("documents", [d.document_id for d in self.documents], "documentId", ".documentId")
        return self


class UpdateFolderAccess(ApiModel):
    model_config = ConfigDict(json_schema_extra=schema_rules(_unique_items("folderIds")))

    organization_id: ResourceId
    folder_ids: _Ids
    access_type: AccessType | None = None
    inherit_from_parent: bool | None = None

    @model_validator(mode="after")
    def _unique_folders(self):
        refuse_repeats("folderIds", self.folder_ids, "folderId")
        return self


class UpdateDocumentAccess(ApiModel):
    model_config = ConfigDict(json_schema_extra=schema_rules(_unique_items("documentIds")))

    organization_id: ResourceId
    document_ids: _Ids
    access_type: AccessType

    @model_validator(mode="after")
    def _unique_documents(self):
        refuse_repeats("documentIds", self.document_ids, "documentId")
        return self


class UpdateDisabledState(ApiModel):
    model_config = ConfigDict(json_schema_extra=schema_rules(_unique_items("documentIds")))

    organization_id: ResourceId
    document_ids: _Ids
    disabled: bool = False

    @model_validator(mode="after")
    def _unique_documents(self):
        refuse_repeats("documentIds", self.document_ids, "documentId")
        return self


# ------------------------------------------------------------------ results (for OpenAPI)


class TokenData(ApiModel):
    token: str


class TokenResult(ApiModel):
    status: Literal["success"]
    message: str
    data: TokenData


class AccessItem(ApiModel):
    """One entry of a bulk result map (api-v2 §1 rule 6)."""

    success: bool
    message: str
    id: str | None = None
    access_type: AccessType | None = None
    inherit_from_parent: bool | None = None
    disabled: bool | None = None


class AccessItems(ApiModel):
    status: Literal["success"]
    message: str
    data: dict[str, AccessItem]


class UserView(ApiModel):
    """A user as returned by get users (api-v2 §2.3)."""

    user_id: str
    name: str
    email: str
    initial: str
    access_role: AccessRole | None = None


class UsersPage(ApiModel):
    status: Literal["success"]
    message: str
    data: list[UserView] | dict[str, list[UserView]]
    next_page_token: str | None
