-- The event-log views (semantics §12), defined once over the three tables every source has:
--   executions (run, execution_id, definition_id, definition_version, status, failure_reason,
--               correlation_id, started_at, completed_at, cancelled_at)
--   steps      (run, execution_id, step_id, node_id, node_type, status, group_id, iteration,
--               started_at, completed_at, decision, source_node_id, output)
--   events     (run, execution_id, seq, event_id, type, step_id, timestamp, correlation_id,
--               external, data)
-- a simulation's result database, a server's database file (where `steps` is a view over the
-- executions' engine state) and the server's Parquet mirror. Times are epoch milliseconds; `run` is the
-- simulated run number (NULL on a server). Steps and events are always joined on
-- (execution_id, step_id): step ids are unique within an execution only. `directly_follows` reads
-- the step order and definition as integers from `_step_keys` and `_definition_keys`, which attach
-- (views.py) defines before this file: from the simulator's stored keys, or numbered.
-- TEMP views: they work on read-only connections and never change the database file.

-- One row per step: how long it took (NULL while it is still running or waiting).
CREATE OR REPLACE TEMP VIEW step_durations AS
SELECT s.run, s.execution_id, s.step_id, s.node_id, s.node_type, s.group_id, s.status, s.decision,
       s.iteration, s.started_at, s.completed_at, s.completed_at - s.started_at AS duration_ms
FROM steps s;

-- One row per execution, from the executions table alone (cheap): outcome and cycle time
-- (dispatch to end, NULL while running).
CREATE OR REPLACE TEMP VIEW execution_outcomes AS
SELECT x.run, x.execution_id, x.definition_id, x.definition_version, x.status, x.failure_reason,
       x.correlation_id, x.started_at, coalesce(x.completed_at, x.cancelled_at) AS ended_at,
       coalesce(x.completed_at, x.cancelled_at) - x.started_at AS cycle_time_ms
FROM executions x;

-- One row per execution: its outcome and cycle time, how many steps it created, its highest
-- loop iteration (1 without loops), how many loop restarts (`loops`), SLA breaches, failed and
-- cancelled steps it had.
CREATE OR REPLACE TEMP VIEW execution_summary AS
WITH per_step AS (
    SELECT execution_id, count(*) AS steps, max(iteration) AS iterations,
           count(*) FILTER (WHERE status = 'breached') AS breaches,
           count(*) FILTER (WHERE status = 'failed') AS failed_steps,
           count(*) FILTER (WHERE status = 'cancelled') AS cancelled_steps
    FROM steps GROUP BY execution_id
), restarts AS (
    SELECT execution_id, count(*) AS loops FROM events
    WHERE type = 'loop.iteration-started' GROUP BY execution_id
)
SELECT o.*, coalesce(p.steps, 0) AS steps, coalesce(p.iterations, 1) AS iterations,
       coalesce(r.loops, 0) AS loops, coalesce(p.breaches, 0) AS breaches,
       coalesce(p.failed_steps, 0) AS failed_steps, coalesce(p.cancelled_steps, 0) AS cancelled_steps
FROM execution_outcomes o
LEFT JOIN per_step p ON p.execution_id = o.execution_id
LEFT JOIN restarts r ON r.execution_id = o.execution_id;

-- One row per reviewer decision on a human step: the time from the step's
-- `step.awaiting-approval` to that reviewer's `step.response-recorded`.
CREATE OR REPLACE TEMP VIEW reviewer_latency AS
WITH responses AS (
    SELECT e.run, e.execution_id, e.step_id, e.timestamp AS decided_at,
           json_transform(e.data, '{"reviewerId": "VARCHAR", "decision": "VARCHAR", "mandatory": "BOOLEAN",
                                    "reason": "VARCHAR"}') AS r
    FROM events e
    WHERE e.type = 'step.response-recorded'
)
SELECT d.run, d.execution_id, d.step_id, s.node_id, s.iteration, d.r.reviewerId AS reviewer_id,
       d.r.decision AS decision, d.r.mandatory AS mandatory, d.r.reason AS reason,
       a.timestamp AS awaiting_at, d.decided_at, d.decided_at - a.timestamp AS latency_ms
FROM responses d
JOIN events a ON a.execution_id = d.execution_id AND a.step_id = d.step_id AND a.type = 'step.awaiting-approval'
JOIN steps s ON s.execution_id = d.execution_id AND s.step_id = d.step_id
WHERE d.r.reviewerId IS NOT NULL AND s.node_type = 'human';

-- One row per iteration of every loop that restarted or was exhausted: iteration n >= 2 starts
-- at its `loop.iteration-started`; iteration 1 at the first step of the loop's entry node (known
-- only once the loop restarted: NULL for a loop exhausted in its first iteration). An iteration
-- ends when the next one starts (outcome `restarted`), when the loop is exhausted (`exhausted`),
-- or with the execution (`final`; NULL while it runs).
CREATE OR REPLACE TEMP VIEW loop_iterations AS
WITH marks AS (
    SELECT e.run, e.execution_id, e.type, e.step_id, e.timestamp,
           e.data ->> 'loopId' AS loop_id, CAST(e.data ->> 'iteration' AS INTEGER) AS iteration
    FROM events e
    WHERE e.type IN ('loop.iteration-started', 'loop.exhausted')
), restarts AS (
    SELECT run, execution_id, loop_id, iteration, step_id AS entry_step_id, timestamp AS started_at
    FROM marks WHERE type = 'loop.iteration-started'
), firsts AS (
    SELECT r.run, r.execution_id, r.loop_id, 1 AS iteration, s.step_id AS entry_step_id, s.started_at
    FROM restarts r
    JOIN steps entry ON entry.execution_id = r.execution_id AND entry.step_id = r.entry_step_id
    JOIN steps s ON s.execution_id = r.execution_id AND s.node_id = entry.node_id AND s.iteration = 1
    WHERE r.iteration = 2
    QUALIFY row_number() OVER (PARTITION BY r.execution_id, r.loop_id ORDER BY s.started_at, s.step_id) = 1
), exhausted AS (
    SELECT run, execution_id, loop_id, iteration, timestamp AS exhausted_at
    FROM marks WHERE type = 'loop.exhausted'
), iterations AS (
    SELECT * FROM restarts
    UNION ALL SELECT * FROM firsts
    UNION ALL
    -- a loop exhausted in its first iteration never restarted: its start is unknown
    SELECT x.run, x.execution_id, x.loop_id, 1, NULL, NULL FROM exhausted x
    WHERE x.iteration = 1
), bounded AS (
    SELECT i.*, lead(i.started_at) OVER w AS next_started_at, lead(i.iteration) OVER w AS next_iteration
    FROM iterations i
    WINDOW w AS (PARTITION BY i.execution_id, i.loop_id ORDER BY i.iteration)
)
SELECT b.run, b.execution_id, b.loop_id, b.iteration, b.entry_step_id, b.started_at,
       coalesce(b.next_started_at, x.exhausted_at, ex.completed_at, ex.cancelled_at) AS ended_at,
       coalesce(b.next_started_at, x.exhausted_at, ex.completed_at, ex.cancelled_at) - b.started_at AS duration_ms,
       CASE WHEN b.next_iteration IS NOT NULL THEN 'restarted'
            WHEN x.exhausted_at IS NOT NULL THEN 'exhausted'
            ELSE 'final' END AS outcome
FROM bounded b
JOIN executions ex ON ex.execution_id = b.execution_id
LEFT JOIN exhausted x ON x.execution_id = b.execution_id AND x.loop_id = b.loop_id AND x.iteration = b.iteration;

-- One row per SLA breach: when the step started, its deadline, when the breach was recorded
-- and how late after the deadline that was (the server's timer may fire a moment late).
CREATE OR REPLACE TEMP VIEW sla_breaches AS
SELECT e.run, e.execution_id, e.step_id, s.node_id, s.node_type, s.iteration,
       CAST(e.data ->> 'slaMs' AS BIGINT) AS sla_ms, s.started_at,
       s.started_at + CAST(e.data ->> 'slaMs' AS BIGINT) AS deadline_at, e.timestamp AS breached_at,
       e.timestamp - (s.started_at + CAST(e.data ->> 'slaMs' AS BIGINT)) AS late_ms
FROM events e
JOIN steps s ON s.execution_id = e.execution_id AND s.step_id = e.step_id
WHERE e.type = 'step.breached';

-- Consecutive steps of each execution in the order they started; steps that started in the
-- same millisecond are ordered by when they ended (still running or waiting: last), then by
-- node id and step id. This is the order pm4py gives an interval log (start timestamp, then
-- timestamp), so these are the pairs process mining calls "directly follows". (One window over
-- all steps ordered by execution first, rather than a window per execution: DuckDB pays per
-- partition, and executions are many and short.)
CREATE OR REPLACE TEMP VIEW step_transitions AS
SELECT run, execution_id, from_step_id, from_node_id, from_started_at, to_step_id, to_node_id, to_started_at
FROM (
    SELECT s.run, s.execution_id,
           s.step_id AS from_step_id, s.node_id AS from_node_id, s.started_at AS from_started_at,
           lead(s.step_id) OVER w AS to_step_id, lead(s.node_id) OVER w AS to_node_id,
           lead(s.started_at) OVER w AS to_started_at, lead(s.execution_id) OVER w AS next_execution_id
    FROM steps s
    WINDOW w AS (ORDER BY s.execution_id, s.started_at, s.completed_at NULLS LAST, s.node_id, s.step_id)
)
WHERE next_execution_id = execution_id;

-- The directly-follows graph per definition: node -> node transition counts over all executions,
-- i.e. step_transitions counted. Built for speed, as the view process mining reads most. It
-- orders the steps by two integers, `_step_keys`' exec_key and step_index, and counts per
-- definition_key, an integer each step carries (attach defines them: stored by the simulator,
-- numbered on other sources), rather than ordering by execution id, start, end and node id and
-- joining every transition to its execution: on a simulation's log, stored in that order, the
-- sort is cheap where the four-key sort was most of the time. Definitions are named after
-- counting. Steps that tie on everything but their step id have the same node, so the node
-- pairs are those of step_transitions. It reads `steps` once: on a server's database `steps` is
-- a view that parses every execution's state.
CREATE OR REPLACE TEMP VIEW directly_follows AS
WITH pairs AS (
    SELECT s.exec_key, s.definition_key, s.node_id AS from_node_id, lead(s.node_id) OVER w AS to_node_id,
           lead(s.exec_key) OVER w AS next_key
    FROM _step_keys s
    WINDOW w AS (ORDER BY s.exec_key, s.step_index)
), counted AS (
    SELECT definition_key, from_node_id, to_node_id, count(*) AS transitions
    FROM pairs WHERE next_key = exec_key GROUP BY ALL
)
SELECT d.definition_id, c.from_node_id, c.to_node_id, c.transitions
FROM counted c JOIN _definition_keys d ON d.definition_key = c.definition_key;
