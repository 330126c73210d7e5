-- Why a writer retired a fact by hand (superseded by nothing): one row per retirement, kept beside
-- the fact so its history can show the reason. A fact revived and retired again keeps the newest.
CREATE TABLE fact_retirements (
    fact_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    redacted TEXT NOT NULL DEFAULT '',
    retired_at REAL NOT NULL,
    retired_by TEXT NOT NULL,
    -- Which request wrote the row: of two racing to retire one fact, only the first writes it.
    claim TEXT NOT NULL
);
