-- PostgreSQL dialect of ../../migrations/014_prune_lookups.sql. A prune round claims the
-- finished executions that ended first; without this index each round sorted every
-- execution, so it cost more the more the database held (about 115 ms a round at 100,000
-- executions, 20-30 ms with it). An execution enters it when it finishes. The command log
-- has no index by execution: reading and deleting a round's commands measured the same with
-- one, which every command would have paid for.
CREATE INDEX executions_ended ON executions ((coalesce(completed_at, cancelled_at)), execution_id)
    WHERE status IN ('completed', 'failed', 'cancelled');
