-- PostgreSQL dialect of ../../migrations/015_checked_updates.sql. A job's version-checked
-- updates, its inserts and its COMMIT go to the database in one pipeline, one round trip.
-- A client-side row count check would come too late (the COMMIT has run), so the check is in
-- the statement: an update that finds its row changed raises serialization_failure, the
-- transaction aborts, the COMMIT that follows in the pipeline is skipped, and the job runs
-- again as for any other conflict.
CREATE FUNCTION collab_expect_one(matched BIGINT, what VARCHAR) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    IF matched <> 1 THEN
        RAISE EXCEPTION '% changed concurrently', what USING ERRCODE = 'serialization_failure';
    END IF;
END
$$;
