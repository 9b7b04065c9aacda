-- PostgreSQL dialect of ../../migrations/009_leases.sql, plus what several processes need.
CREATE TABLE leases (
    kind              VARCHAR NOT NULL,
    key               VARCHAR NOT NULL,
    owner             VARCHAR NOT NULL,
    lease_until       BIGINT NOT NULL,
    PRIMARY KEY (kind, key)
);

-- List keys (creation order, for paging) come from one sequence every process shares.
CREATE SEQUENCE list_keys;
SELECT setval('list_keys', greatest(1,
    (SELECT coalesce(max(list_key), 0) FROM executions),
    (SELECT coalesce(max(list_key), 0) FROM definitions),
    (SELECT coalesce(max(list_key), 0) FROM outbox)));

-- seq is unique per execution by constraint, not by the care of one writer thread (the index
-- replaces 007's plain one on the same columns).
DROP INDEX events_execution;
CREATE UNIQUE INDEX events_execution ON events (execution_id, seq);
-- Each process polls for due deadlines (those another process created included).
CREATE INDEX executions_deadline ON executions (next_deadline) WHERE status = 'running';

-- DuckDB's list functions, so the store's statements read the same on both backends.
CREATE FUNCTION list_contains(anyarray, anyelement) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT $2 = ANY($1)';
CREATE FUNCTION list_has_any(anyarray, anyarray) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT $1 && $2';
CREATE FUNCTION list_has_all(anyarray, anyarray) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT $1 @> $2';
