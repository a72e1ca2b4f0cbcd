-- A page submission makes its waiting run ready in the same statement: the submission is one
-- `UPDATE pages … RETURNING` (`store/pages.rs::submit`), and this trigger runs inside it, so the
-- page's answer and the run's resumption commit together or not at all, in one round trip.
-- The trigger takes the run's row lock after the page's, in the order `complete_step` takes
-- them (page `FOR SHARE`, then the run), so the two cannot deadlock.
--
-- A run made ready wakes idle runners in every process: one NOTIFY on the channel
-- `store::runs::RUNS_READY_CHANNEL` names ('tessera_runs_ready'), sent at commit.
CREATE FUNCTION tessera_submission_readies_run() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE runs SET status = 'ready', updated_at = NEW.submitted_at
    WHERE id = NEW.run_id AND status = 'waiting';
    IF FOUND THEN
        PERFORM pg_notify('tessera_runs_ready', '');
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER pages_submitted_readies_run
AFTER UPDATE OF status ON pages
FOR EACH ROW
WHEN (OLD.status = 'open' AND NEW.status = 'submitted' AND NEW.run_id IS NOT NULL)
EXECUTE FUNCTION tessera_submission_readies_run();
