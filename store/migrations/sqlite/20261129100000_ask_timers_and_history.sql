-- Reminders, escalations and each ask's history (issue 31).
--
-- `ask_timers`: one row per reminder or escalation of a page with assignees, made with the page,
-- and one per approval stage started after the first (born `fired`: its outbox holds the links).
-- `state` changes `pending → fired` exactly once, by a conditional UPDATE in the transaction
-- that applies what the timer does (fresh links for a reminder, new assignees for an
-- escalation) and fills `outbox` with the mail to send (the fresh links, until delivered).
-- `fired → done` clears the outbox once the mail went out; a process that dies in between
-- leaves the row `fired`, and the next one sends the same mail again with the same
-- `Message-ID` (`send_lease_until` keeps two processes from sending it at once).
--
-- `ask_events`: the ask's history, oldest first by `id`.
CREATE TABLE ask_timers (
    id                TEXT PRIMARY KEY,
    page_id           TEXT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    kind              TEXT NOT NULL CHECK (kind IN ('remind', 'escalate', 'stage')),
    due_at            INTEGER NOT NULL,
    targets           TEXT NOT NULL DEFAULT '[]',
    state             TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'fired', 'done')),
    fired_at          INTEGER,
    outbox            TEXT,
    send_lease_until  INTEGER,
    send_attempts     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX ask_timers_due ON ask_timers (state, due_at);

CREATE TABLE ask_events (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id  TEXT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    at       INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    who      TEXT,
    detail   TEXT
);
CREATE INDEX ask_events_page ON ask_events (page_id, id);
