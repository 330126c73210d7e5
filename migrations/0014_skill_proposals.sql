-- Skills proposed from finished work. Nothing is registered in `skills` until a writer confirms
-- one; rejecting only records the decision. Lists are JSON arrays of text; `candidates` holds what
-- the proposal may duplicate, found when it was made. `status` is pending, confirming (a confirm
-- holds its claim while it registers the skill), confirmed or rejected.
CREATE TABLE skill_proposals (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    slug TEXT NOT NULL,
    title TEXT NOT NULL,
    triggers TEXT NOT NULL,
    steps TEXT NOT NULL,
    source_trail TEXT NOT NULL,
    candidates TEXT NOT NULL DEFAULT '[]',
    redacted TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL DEFAULT 'pending',
    reason TEXT,
    skill_id TEXT,
    created_at REAL NOT NULL,
    created_by TEXT NOT NULL,
    decided_at REAL,
    decided_by TEXT
);

CREATE INDEX skill_proposals_by_scope ON skill_proposals (scope, status, created_at);
