-- PostgreSQL dialect of ../../migrations/005_webhook_outbox.sql: the same tables and columns.
-- Push delivery of external events (semantics §6). Rows are written in the same transaction
-- as the events they carry, so an acknowledged change never loses its deliveries; the body is
-- stored as sent, so every retry signs the same bytes. The secret stays on the execution row.
CREATE TABLE outbox (
    event_id          VARCHAR PRIMARY KEY,   -- also the x-service-event-id header: stable across retries
    workspace_id      VARCHAR NOT NULL,
    execution_id      VARCHAR NOT NULL,
    seq               INTEGER NOT NULL,
    url               VARCHAR NOT NULL,
    body              VARCHAR NOT NULL,
    status            VARCHAR NOT NULL,      -- pending | delivered | dead
    attempts          INTEGER NOT NULL,      -- attempts made in all (the x-service-attempt header counts on)
    failures          INTEGER NOT NULL,      -- failed attempts in a row in the current schedule (redrive resets)
    next_attempt_at   BIGINT NOT NULL,
    last_error        VARCHAR,
    created_at        BIGINT NOT NULL,
    delivered_at      BIGINT,
    dead_at           BIGINT,
    list_key          BIGINT NOT NULL        -- creation order, for stable paging
);
