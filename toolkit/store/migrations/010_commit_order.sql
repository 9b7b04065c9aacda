-- The transaction that wrote each row of the append-only log tables, for the Parquet mirror of
-- a database several processes write (PostgreSQL): see toolkit/store/postgres/eventlog.py.
-- DuckDB's mirror reads rowids instead (its one writer commits rows in order), so here the
-- column stays NULL; it exists so that both backends keep one schema.
ALTER TABLE events ADD COLUMN txid BIGINT;
ALTER TABLE commands ADD COLUMN txid BIGINT;
ALTER TABLE definition_versions ADD COLUMN txid BIGINT;
