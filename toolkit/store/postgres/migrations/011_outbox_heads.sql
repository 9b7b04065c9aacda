-- Every process polls the outbox each second for the oldest pending row of each execution
-- (its head): index the pending rows only, so the poll costs the backlog, not the history
-- of every delivery ever made.
CREATE INDEX outbox_pending ON outbox (execution_id, seq) WHERE status = 'pending';
