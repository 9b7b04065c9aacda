-- PostgreSQL dialect of ../../migrations/006_member_lists.sql: the same tables and columns.
-- Member lists for get users (api-v2 §4.4): each membership's position in its list — the
-- organization's contact list, or the members of one folder or document — handed out 1, 2, 3 …
-- as members are added and never reused, so a page is a range of positions. The member's
-- name, email and initial are copied onto the membership (kept in step with `users` by every
-- write that changes them) so that a page reads one table.

ALTER TABLE memberships ADD COLUMN list_pos BIGINT;
ALTER TABLE memberships ADD COLUMN name VARCHAR;
ALTER TABLE memberships ADD COLUMN email VARCHAR;
ALTER TABLE memberships ADD COLUMN initial VARCHAR;

-- The last position handed out per list; it never goes down, even when members leave.
CREATE TABLE member_lists (
    workspace_id        VARCHAR NOT NULL,
    organization_id     VARCHAR NOT NULL,
    resource_type       VARCHAR NOT NULL,
    resource_id         VARCHAR NOT NULL,
    last_pos            BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, organization_id, resource_type, resource_id)
);
