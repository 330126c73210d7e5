-- Where the nightly maintenance pass stands. A cron invocation does a bounded amount of work (D1
-- allows 1,000 queries an invocation) and records here how far it got, so the next invocation
-- resumes there: one row per pass, its state as JSON (the pass's day, the stages done, the last
-- key and vault tended, the backup's watermark and page). Operational only: backups leave it out.
CREATE TABLE maintenance_cursor (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at REAL NOT NULL
);
