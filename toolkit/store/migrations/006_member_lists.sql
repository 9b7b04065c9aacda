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

-- Existing lists keep the order they were paged in before: users' creation order.
UPDATE memberships SET list_pos = p.pos, name = p.name, email = p.email, initial = p.initial
FROM (SELECT m.workspace_id, m.user_id, m.resource_type, m.organization_id, m.resource_id, u.name, u.email, u.initial,
             row_number() OVER (PARTITION BY m.workspace_id, m.organization_id, m.resource_type, m.resource_id
                                ORDER BY m.user_seq) AS pos
      FROM memberships m JOIN users u ON u.workspace_id = m.workspace_id AND u.user_id = m.user_id) p
WHERE memberships.workspace_id = p.workspace_id AND memberships.user_id = p.user_id
  AND memberships.resource_type = p.resource_type AND memberships.organization_id = p.organization_id
  AND memberships.resource_id = p.resource_id;

INSERT INTO member_lists
SELECT workspace_id, organization_id, resource_type, resource_id, max(list_pos) FROM memberships
WHERE list_pos IS NOT NULL GROUP BY ALL;
