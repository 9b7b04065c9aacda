-- PostgreSQL dialect of ../../migrations/001_workflow.sql: the same tables and columns.
-- Workspaces, service tokens, and the workflow engine's tables.
-- Column names of executions/steps/events match the simulator's result tables, so the
-- analytics views run on either.

CREATE TABLE workspaces (
    workspace_id      VARCHAR PRIMARY KEY,
    api_key_hash      VARCHAR NOT NULL UNIQUE,
    label             VARCHAR NOT NULL,
    dev               BOOLEAN NOT NULL DEFAULT false,
    jwt_secret        VARCHAR NOT NULL,
    advanced_queries  BOOLEAN NOT NULL DEFAULT true,
    created_at        BIGINT NOT NULL
);

CREATE TABLE auth_tokens (
    token_hash        VARCHAR PRIMARY KEY,
    workspace_id      VARCHAR NOT NULL,
    created_at        BIGINT NOT NULL
);

-- Every version of every definition: executions stay pinned to theirs.
CREATE TABLE definition_versions (
    workspace_id      VARCHAR NOT NULL,
    definition_id     VARCHAR NOT NULL,
    version           INTEGER NOT NULL,
    body              VARCHAR NOT NULL,      -- the create/update body as sent (JSON)
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, definition_id, version)
);

-- One row per definition: its current version and status (updated in place).
CREATE TABLE definitions (
    workspace_id      VARCHAR NOT NULL,
    definition_id     VARCHAR NOT NULL,
    version           INTEGER NOT NULL,
    status            VARCHAR NOT NULL,
    scope_level       VARCHAR NOT NULL,
    organization_id   VARCHAR,
    document_id       VARCHAR,
    tags              VARCHAR[],
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    list_key          BIGINT NOT NULL,       -- creation order, for stable paging
    PRIMARY KEY (workspace_id, definition_id)
);

CREATE TABLE executions (
    run               INTEGER,               -- NULL on a server; the simulator numbers its runs
    workspace_id      VARCHAR NOT NULL,
    execution_id      VARCHAR PRIMARY KEY,
    definition_id     VARCHAR NOT NULL,
    definition_version INTEGER NOT NULL,
    status            VARCHAR NOT NULL,
    failure_reason    VARCHAR,
    correlation_id    VARCHAR NOT NULL,
    idempotency_key   VARCHAR,
    organization_id   VARCHAR,
    document_id       VARCHAR,
    webhook_url       VARCHAR,
    webhook_secret    VARCHAR,
    started_at        BIGINT NOT NULL,
    completed_at      BIGINT,
    cancelled_at      BIGINT,
    next_deadline     BIGINT,                -- earliest SLA deadline / agent timeout; the timer's index
    state             VARCHAR NOT NULL,      -- the engine's ExecutionState.to_dict() as JSON
    version           INTEGER NOT NULL,      -- bumped by every committed transition
    list_key          BIGINT NOT NULL
);
-- Idempotent dispatch holds under races because of this constraint (NULL keys never collide).
CREATE UNIQUE INDEX executions_idempotency ON executions (workspace_id, definition_id, idempotency_key);

CREATE TABLE events (
    run               INTEGER,
    workspace_id      VARCHAR NOT NULL,
    execution_id      VARCHAR NOT NULL,
    seq               INTEGER NOT NULL,
    event_id          VARCHAR NOT NULL,
    type              VARCHAR NOT NULL,
    step_id           VARCHAR,
    timestamp         BIGINT NOT NULL,
    correlation_id    VARCHAR NOT NULL,
    external          BOOLEAN NOT NULL,
    data              VARCHAR NOT NULL
);

-- Every input that changed an execution, in order, with its time: enough to replay it.
CREATE TABLE commands (
    workspace_id      VARCHAR NOT NULL,
    execution_id      VARCHAR NOT NULL,
    version           INTEGER NOT NULL,      -- the execution version this command produced
    applied_at        BIGINT NOT NULL,
    kind              VARCHAR NOT NULL,
    payload           VARCHAR NOT NULL
);

-- Steps are part of each execution's engine state; this view lays them out as rows with the
-- same columns as the simulator's `steps` table (see the DuckDB file for why there is no table).
CREATE VIEW steps AS
WITH flat AS (
    SELECT x.workspace_id, x.execution_id, s.*
    FROM executions x,
         jsonb_to_recordset((x.state::jsonb) -> 'steps')
             AS s(step_id VARCHAR, node_id VARCHAR, node_type VARCHAR, status VARCHAR, group_id VARCHAR,
                  iteration INTEGER, started_at BIGINT, completed_at BIGINT, output JSONB)
)
SELECT NULL::INTEGER AS run, f.workspace_id, f.execution_id, f.step_id, f.node_id, f.node_type, f.status,
       f.group_id, f.iteration, f.started_at, f.completed_at,
       f.output ->> 'decision' AS decision,
       CASE WHEN f.step_id NOT LIKE '%\_\_to\_\_%' ESCAPE '\' THEN NULL
            WHEN substring(f.step_id FROM '^(.*)__to__') LIKE 'group\_%' ESCAPE '\'
                 AND strpos(substring(f.step_id FROM '^(.*)__to__'), '__') = 0
                THEN substr(substring(f.step_id FROM '^(.*)__to__'), 7)
            ELSE p.node_id END AS source_node_id,
       coalesce(f.output::VARCHAR, '{}') AS output
FROM flat f
LEFT JOIN flat p ON p.execution_id = f.execution_id AND p.step_id = substring(f.step_id FROM '^(.*)__to__');
