-- Who proposed a confirmed call, recorded from the path it arrived on (the model loop, or the
-- manual-tool form and `/tool`), so resuming an approved call never reads it from the call's id,
-- which a model chooses. Rows from before: the manual-tool path opens a thread of its own whose
-- intent is `manual: <operation>`; no other path names a thread so.
ALTER TABLE chat_confirmations ADD COLUMN caller TEXT NOT NULL DEFAULT 'model'
    CHECK (caller IN ('model', 'person'));
UPDATE chat_confirmations SET caller = 'person'
WHERE thread_id IN (SELECT id FROM chat_threads WHERE intent LIKE 'manual: %');
