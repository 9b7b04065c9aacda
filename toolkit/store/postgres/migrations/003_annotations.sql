-- PostgreSQL dialect of ../../migrations/003_annotations.sql: the same tables and columns.
-- Comment annotations, their read receipts, and activity logs (api-v2 §4.12–4.16;
-- semantics §9, §10). Every table carries workspace_id and every query filters on it.
-- organization_id is '' for a document created without an organization, as in `documents`.
-- Timestamps are epoch milliseconds.

CREATE SEQUENCE annotation_seq START 1;

-- One row per annotation. `body` is the annotation as stored and returned (JSON); the other
-- columns are what filters, visibility and counts read, extracted once at write time so no
-- query parses JSON.
CREATE TABLE annotations (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    document_id         VARCHAR NOT NULL,
    annotation_id       VARCHAR NOT NULL,
    seq                 BIGINT NOT NULL,        -- creation order: the stable paging key
    status_id           VARCHAR NOT NULL,
    status_type         VARCHAR,                -- 'terminal' = resolved / accepted
    visibility_type     VARCHAR NOT NULL,       -- public | organizationPrivate | restricted
    visibility_org      VARCHAR,                -- organizationPrivate: the organization
    visibility_users    VARCHAR[],              -- restricted: who may see it
    authors             VARCHAR[] NOT NULL,     -- distinct from.userId of its comments
    location_id         VARCHAR,
    agent_ids           VARCHAR[] NOT NULL,     -- distinct agent.agentId of its comments
    agent_urls          VARCHAR[] NOT NULL,     -- normalised page URLs stamped from agent.url
    is_agent            BOOLEAN NOT NULL,       -- some comment has an `agent` object
    has_suggestion      BOOLEAN NOT NULL,
    created_at          BIGINT NOT NULL,
    last_updated        BIGINT NOT NULL,
    body                VARCHAR NOT NULL,
    PRIMARY KEY (workspace_id, organization_id, document_id, annotation_id)
);

-- Who has seen which annotation: its authors (from.userId of its comments) and the users
-- who marked it read. `unread` counts visible annotations a user has not seen.
CREATE TABLE annotation_seen (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    document_id         VARCHAR NOT NULL,
    annotation_id       VARCHAR NOT NULL,
    user_id             VARCHAR NOT NULL,
    how                 VARCHAR NOT NULL,       -- authored | read
    seen_at             BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, organization_id, document_id, annotation_id, user_id)
);

-- Summary tables for count (api-v2 §4.12), kept in step with `annotations` and
-- `annotation_seen` by every write in the same transaction, so counting 30 documents reads a
-- few rows per document instead of every annotation. Annotations never change after they are
-- added (only deletes), so a row's status and visibility can be counted once.
--
-- annotation_tallies: public and organizationPrivate annotations per document, status and
-- visibility (visibility_org is '' for public).
CREATE TABLE annotation_tallies (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    document_id         VARCHAR NOT NULL,
    status_id           VARCHAR NOT NULL,
    visibility_type     VARCHAR NOT NULL,
    visibility_org      VARCHAR NOT NULL,
    n                   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, organization_id, document_id, status_id, visibility_type, visibility_org)
);

-- annotation_user_tallies, per user and document:
--   kind 'audience': restricted annotations whose visibility.userIds name the user;
--   kind 'seen': annotations the user has seen (annotation_seen) and whose visibility admits
--   them apart from organization membership (restricted ones only when the user is named;
--   organizationPrivate ones are filtered by membership when counted).
CREATE TABLE annotation_user_tallies (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    user_id             VARCHAR NOT NULL,
    document_id         VARCHAR NOT NULL,
    kind                VARCHAR NOT NULL,
    status_id           VARCHAR NOT NULL,
    visibility_type     VARCHAR NOT NULL,
    visibility_org      VARCHAR NOT NULL,
    n                   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, organization_id, user_id, document_id, kind, status_id, visibility_type, visibility_org)
);

CREATE SEQUENCE activity_seq START 1;

-- One row per activity record; `body` is the record as returned (JSON, without the columns
-- below, which are merged back in when it is read).
CREATE TABLE activities (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    activity_id         VARCHAR NOT NULL,
    seq                 BIGINT NOT NULL,        -- creation order: newest first is seq DESC
    document_id         VARCHAR,
    target_entity_id    VARCHAR,
    created_at          BIGINT NOT NULL,
    last_updated        BIGINT NOT NULL,
    body                VARCHAR NOT NULL,
    PRIMARY KEY (workspace_id, organization_id, activity_id)
);
