-- Simulation results. Column names match the server store's tables so the analytics views
-- of toolkit.analytics run on either; `run` numbers the simulated executions. Three columns the
-- server's tables lack let `directly_follows` sort and group by integers: `exec_key`, a dense
-- integer per execution (unique in the database, also when several simulations share it),
-- `step_index`, each step's position in its execution in the views' step order (0, 1, 2, …),
-- and `definition_key`, one integer per definition id in the database. `outcomes.replication`
-- numbers the replications of a simulate(..., replications=R) call (0 without replications).
CREATE TABLE IF NOT EXISTS executions (
    run               INTEGER,
    execution_id      VARCHAR,
    definition_id     VARCHAR,
    definition_version INTEGER,
    status            VARCHAR,
    failure_reason    VARCHAR,
    correlation_id    VARCHAR,
    started_at        BIGINT,
    completed_at      BIGINT,
    cancelled_at      BIGINT,
    exec_key          INTEGER,
    definition_key    INTEGER
);
CREATE TABLE IF NOT EXISTS steps (
    run               INTEGER,
    execution_id      VARCHAR,
    step_id           VARCHAR,
    node_id           VARCHAR,
    node_type         VARCHAR,
    status            VARCHAR,
    group_id          VARCHAR,
    iteration         INTEGER,
    started_at        BIGINT,
    completed_at      BIGINT,
    decision          VARCHAR,
    source_node_id    VARCHAR,
    output            VARCHAR,
    exec_key          INTEGER,
    step_index        INTEGER,
    definition_key    INTEGER
);
CREATE TABLE IF NOT EXISTS events (
    run               INTEGER,
    execution_id      VARCHAR,
    seq               INTEGER,
    event_id          VARCHAR,
    type              VARCHAR,
    step_id           VARCHAR,
    timestamp         BIGINT,
    correlation_id    VARCHAR,
    external          BOOLEAN,
    data              VARCHAR
);
CREATE TABLE IF NOT EXISTS outcomes (
    run               INTEGER,
    execution_id      VARCHAR,
    status            VARCHAR,
    failure_reason    VARCHAR,
    path              VARCHAR,
    iterations        INTEGER,
    cycle_time_ms     BIGINT,
    breaches          INTEGER,
    steps             INTEGER,
    replication       INTEGER
);
