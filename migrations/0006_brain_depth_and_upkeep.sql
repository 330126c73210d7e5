-- Depth: a long fact's full text (hook plus body) cut into overlapping passages at sentence
-- boundaries. Each passage is keyword-indexed here and embedded under its own vector id
-- (<fact id>:<ordinal>), so the text past the hook can be found and every vector id is recorded.
CREATE TABLE fact_passages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    fact_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    text_chars INTEGER GENERATED ALWAYS AS (length(text)) VIRTUAL,
    embedded_at REAL
);

CREATE INDEX fact_passages_by_fact ON fact_passages (fact_id, ordinal);

CREATE VIRTUAL TABLE fact_passages_fts USING fts5 (
    text,
    content = 'fact_passages',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER fact_passages_ai AFTER INSERT ON fact_passages BEGIN
    INSERT INTO fact_passages_fts (rowid, text) VALUES (new.seq, new.text);
END;

CREATE TRIGGER fact_passages_ad AFTER DELETE ON fact_passages BEGIN
    INSERT INTO fact_passages_fts (fact_passages_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;

-- The normalised text's hash (case, spacing, punctuation folded) for the write-time block band;
-- rows written before this migration have none and are left to consolidation.
ALTER TABLE memory ADD COLUMN norm_hash TEXT;

CREATE INDEX memory_by_norm_hash ON memory (scope, norm_hash) WHERE superseded_at IS NULL;

-- 1 (trivia) to 5 (essential), from the writer or the brain's LLM; 3 when neither says.
ALTER TABLE memory ADD COLUMN importance INTEGER NOT NULL DEFAULT 3;

-- When the vectors of a superseded or retired fact (and of its passages) left the index: only
-- once its successor's vectors are stored.
ALTER TABLE memory ADD COLUMN vectors_retired_at REAL;

CREATE INDEX memory_by_vector_upkeep ON memory (vectors_retired_at, superseded_at);

-- Links between facts that are both kept: a write-time contradiction, say.
CREATE TABLE fact_links (
    fact_id TEXT NOT NULL,
    other_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (fact_id, other_id, kind)
);

CREATE INDEX fact_links_by_other ON fact_links (other_id);

-- How often and when a fact was last recalled. A side table, so reads never change a fact row,
-- its updated_at, the event log or an export.
CREATE TABLE fact_signals (
    fact_id TEXT PRIMARY KEY,
    recall_count INTEGER NOT NULL DEFAULT 0,
    last_recalled_at REAL
);

-- Consolidation's proposals: nothing they name changes until one is accepted.
CREATE TABLE proposals (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    scope TEXT NOT NULL,
    fact_ids TEXT NOT NULL,
    text TEXT,
    reason TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    created_at REAL NOT NULL,
    decided_at REAL,
    decided_by TEXT
);

CREATE INDEX proposals_by_scope ON proposals (scope, status, created_at);
