-- PostgreSQL dialect of ../../migrations/010_commit_order.sql. Every insert stamps the id of
-- its transaction; the mirror reads the rows of the transactions that ended since its last
-- sync (txid below the snapshot's xmin), so no row is missed or copied twice whatever order
-- the processes commit in. Rows older than this migration keep NULL (no table rewrite); a
-- mirror's first sync takes them too. Commands are found by txid through an index (an
-- execution's events are written with its command); definition versions are few.
ALTER TABLE events ADD COLUMN txid BIGINT;
ALTER TABLE events ALTER COLUMN txid SET DEFAULT pg_current_xact_id()::text::bigint;
ALTER TABLE commands ADD COLUMN txid BIGINT;
ALTER TABLE commands ALTER COLUMN txid SET DEFAULT pg_current_xact_id()::text::bigint;
ALTER TABLE definition_versions ADD COLUMN txid BIGINT;
ALTER TABLE definition_versions ALTER COLUMN txid SET DEFAULT pg_current_xact_id()::text::bigint;
CREATE INDEX commands_txid ON commands (txid);
CREATE INDEX definition_versions_txid ON definition_versions (txid);
