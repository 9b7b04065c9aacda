-- PostgreSQL dialect of ../../migrations/004_agents.sql: the same tables and columns.
-- The agent registry (api-v2 §4.11, §9.3; semantics §11).
-- Built-in agents live in code (toolkit.services.agents.BUILT_IN); a workspace gets a row for
-- one only once it changes it (enabled, or a new version). Custom agents always have a row.

CREATE SEQUENCE agent_list_keys START 1;

CREATE TABLE agents (
    workspace_id      VARCHAR NOT NULL,
    agent_id          VARCHAR NOT NULL,
    built_in          BOOLEAN NOT NULL,
    name              VARCHAR NOT NULL,
    description       VARCHAR,
    enabled           BOOLEAN NOT NULL,
    version           INTEGER NOT NULL,      -- the current version (identity edits keep it)
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    list_key          BIGINT NOT NULL,       -- creation order, for stable paging (built-ins: negative)
    PRIMARY KEY (workspace_id, agent_id)
);

-- Every version of every agent's behaviour; never updated, never deleted.
CREATE TABLE agent_versions (
    workspace_id      VARCHAR NOT NULL,
    agent_id          VARCHAR NOT NULL,
    version           INTEGER NOT NULL,
    instructions      VARCHAR,
    config            VARCHAR,               -- JSON object or NULL
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, agent_id, version)
);
