-- A page submission makes its waiting run ready in the same statement: the submission is one
-- `UPDATE pages … RETURNING` (`store/pages.rs::submit`), and this trigger runs inside it, so the
-- page's answer and the run's resumption commit together or not at all without a transaction
-- of several statements around them.
CREATE TRIGGER pages_submitted_readies_run
AFTER UPDATE OF status ON pages
WHEN OLD.status = 'open' AND NEW.status = 'submitted' AND NEW.run_id IS NOT NULL
BEGIN
    UPDATE runs SET status = 'ready', updated_at = NEW.submitted_at
    WHERE id = NEW.run_id AND status = 'waiting';
END;
