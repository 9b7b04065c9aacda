-- PostgreSQL dialect of ../../migrations/002_access.sql: the same tables and columns.
-- Organizations, folders, documents, users, memberships and organization user groups
-- (api-v2 §4.1–4.4, §4.17, §4.18; semantics §8). Every table carries workspace_id and
-- every query filters on it. Timestamps are epoch milliseconds, except memberships.expires_at
-- which is Unix seconds (as JWT `exp`, api-v2 §2.1).

CREATE TABLE organizations (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    organization_name   VARCHAR,
    created_at          BIGINT NOT NULL DEFAULT 0,
    updated_at          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, organization_id)
);

-- access_type is NULL while inherit_from_parent is true (the folder takes its parent's settings).
CREATE TABLE folders (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    folder_id           VARCHAR NOT NULL,
    folder_name         VARCHAR,
    parent_folder_id    VARCHAR,
    access_type         VARCHAR DEFAULT 'organizationPrivate',   -- organizationPrivate | restricted | public
    inherit_from_parent BOOLEAN NOT NULL DEFAULT false,
    created_at          BIGINT NOT NULL DEFAULT 0,
    updated_at          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, organization_id, folder_id)
);

-- organization_id is '' for a document created without an organization (semantics §8).
CREATE TABLE documents (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL DEFAULT '',
    document_id         VARCHAR NOT NULL,
    document_name       VARCHAR,
    folder_id           VARCHAR,
    access_type         VARCHAR NOT NULL DEFAULT 'organizationPrivate',   -- organizationPrivate | restricted | public
    disabled            BOOLEAN NOT NULL DEFAULT false,
    created_at          BIGINT NOT NULL DEFAULT 0,
    updated_at          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, organization_id, document_id)
);

-- Users are a workspace-wide identity; `id` is the opaque internal id returned by add users,
-- `seq` their creation order (the stable paging key of get users).
CREATE SEQUENCE user_seq;

CREATE TABLE users (
    workspace_id        VARCHAR NOT NULL,
    user_id             VARCHAR NOT NULL,
    id                  VARCHAR NOT NULL,
    name                VARCHAR NOT NULL DEFAULT '',
    email               VARCHAR NOT NULL DEFAULT '',
    initial             VARCHAR NOT NULL DEFAULT '',
    seq                 BIGINT NOT NULL DEFAULT nextval('user_seq'),
    created_at          BIGINT NOT NULL DEFAULT 0,
    updated_at          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, user_id)
);

-- One row per (user, resource). resource_type: organization (resource_id = organization_id),
-- folder or document. organization_id is '' for documents without an organization.
-- expires_at: Unix seconds, NULL = never; an expired membership counts as absent.
CREATE TABLE memberships (
    workspace_id        VARCHAR NOT NULL,
    user_id             VARCHAR NOT NULL,
    resource_type       VARCHAR NOT NULL,
    resource_id         VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    access_role         VARCHAR NOT NULL DEFAULT 'editor',   -- viewer | editor
    expires_at          DOUBLE PRECISION,
    user_seq            BIGINT NOT NULL,                     -- users.seq, copied: pages without a join
    created_at          BIGINT NOT NULL DEFAULT 0,
    updated_at          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, user_id, resource_type, organization_id, resource_id)
);

CREATE TABLE user_groups (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    group_id            VARCHAR NOT NULL,
    group_name          VARCHAR NOT NULL DEFAULT '',
    created_at          BIGINT NOT NULL DEFAULT 0,
    updated_at          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, organization_id, group_id)
);

CREATE TABLE user_group_members (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    group_id            VARCHAR NOT NULL,
    user_id             VARCHAR NOT NULL,
    created_at          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, organization_id, group_id, user_id)
);
