-- PostgreSQL dialect of ../../migrations/012_credential_epoch.sql: the same table.
-- Credential changes (issue 13): one counter, raised in the same transaction as every key
-- rotation, token revocation and secret rotation. A process that remembers confirmed
-- key/token pairs reads it with each request on a database other processes share, so a
-- change acknowledged by any process stops the old credential on every process at once.
CREATE TABLE credential_epoch (
    n BIGINT NOT NULL
);
INSERT INTO credential_epoch VALUES (0);
