-- Per-execution reads must cost the same at a million executions as at none: an index finds an
-- execution's events (getEvents, replays) without scanning every event ever stored. The
-- executions table needs none: its primary key is the execution id.
CREATE INDEX events_execution ON events (execution_id);
