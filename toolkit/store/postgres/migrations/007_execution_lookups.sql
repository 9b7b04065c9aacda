-- PostgreSQL dialect of ../../migrations/007_execution_lookups.sql. An execution's events in
-- seq order come straight off this index; paging lists walk (workspace, list_key).
CREATE INDEX events_execution ON events (execution_id, seq);
CREATE INDEX executions_list ON executions (workspace_id, list_key);
