-- PostgreSQL dialect of ../../migrations/013_execution_steps.sql.
-- Steps as rows, defined once: `execution_steps(ids)` lays out the steps of the executions
-- `ids` (all of them when NULL) with each execution's version; the `steps` view of 001 becomes
-- `execution_steps(NULL)` without it. The analysts' copy and the Parquet mirror
-- (toolkit/store/postgres/eventlog.py) call the function with the executions they read: the
-- view's CTE is read twice, so filtering the view would expand every execution's steps first.
-- A single-SELECT, STABLE SQL function is inlined into the calling query, so the filter
-- reaches the executions scan (and its index), and NULL folds away in the view.
CREATE FUNCTION execution_steps(ids TEXT[])
RETURNS TABLE (
    run INTEGER, workspace_id VARCHAR, execution_id VARCHAR, step_id VARCHAR, node_id VARCHAR,
    node_type VARCHAR, status VARCHAR, group_id VARCHAR, iteration INTEGER, started_at BIGINT,
    completed_at BIGINT, decision TEXT, source_node_id TEXT, output VARCHAR, version INTEGER
)
LANGUAGE sql STABLE AS $$
WITH flat AS (
    SELECT x.workspace_id, x.execution_id, x.version AS x_version, s.*
    FROM executions x,
         jsonb_to_recordset((x.state::jsonb) -> 'steps')
             AS s(step_id VARCHAR, node_id VARCHAR, node_type VARCHAR, status VARCHAR, group_id VARCHAR,
                  iteration INTEGER, started_at BIGINT, completed_at BIGINT, output JSONB)
    WHERE ids IS NULL OR x.execution_id = ANY(ids)
)
SELECT NULL::INTEGER, f.workspace_id, f.execution_id, f.step_id, f.node_id, f.node_type, f.status,
       f.group_id, f.iteration, f.started_at, f.completed_at,
       f.output ->> 'decision',
       CASE WHEN f.step_id NOT LIKE '%\_\_to\_\_%' ESCAPE '\' THEN NULL
            WHEN substring(f.step_id FROM '^(.*)__to__') LIKE 'group\_%' ESCAPE '\'
                 AND strpos(substring(f.step_id FROM '^(.*)__to__'), '__') = 0
                THEN substr(substring(f.step_id FROM '^(.*)__to__'), 7)
            ELSE p.node_id END,
       coalesce(f.output::VARCHAR, '{}'),
       f.x_version
FROM flat f
LEFT JOIN flat p ON p.execution_id = f.execution_id AND p.step_id = substring(f.step_id FROM '^(.*)__to__')
$$;

DROP VIEW steps;
CREATE VIEW steps AS
SELECT run, workspace_id, execution_id, step_id, node_id, node_type, status, group_id, iteration,
       started_at, completed_at, decision, source_node_id, output
FROM execution_steps(NULL);
