-- Work that must happen once cluster-wide (a webhook delivery attempt, a background agent run)
-- is claimed with a lease: the process that holds an unexpired lease on (kind, key) does the
-- work; when it dies, the lease runs out and another process takes the work over. DuckDB has
-- one process per file, but the schema is the same on both backends.
CREATE TABLE leases (
    kind              VARCHAR NOT NULL,      -- delivery | agent-run
    key               VARCHAR NOT NULL,      -- the event id, or "<execution id>/<step id>"
    owner             VARCHAR NOT NULL,      -- the process holding it (host:pid:random)
    lease_until       BIGINT NOT NULL,       -- epoch ms; after this another process may claim it
    PRIMARY KEY (kind, key)
);
