-- The brain: curated, bi-temporal facts (valid_from .. superseded_at), their keyword index, the
-- append-only event log of every change, and registered skills. Times are Unix seconds (REAL).

CREATE TABLE memory (
    -- An explicit INTEGER PRIMARY KEY keeps the FTS rowid stable across VACUUM.
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    entry_type TEXT NOT NULL DEFAULT 'fact',
    scope TEXT NOT NULL,
    source TEXT NOT NULL,
    source_tier INTEGER NOT NULL DEFAULT 2,
    content TEXT NOT NULL,
    confidence REAL NOT NULL DEFAULT 1.0,
    valid_from REAL NOT NULL,
    superseded_at REAL,
    superseded_by TEXT,
    body_uri TEXT,
    embed_id TEXT,
    content_hash TEXT NOT NULL,
    embedded_at REAL,
    updated_at REAL NOT NULL,
    created_at REAL NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0,
    redacted TEXT NOT NULL DEFAULT ''
);

CREATE INDEX memory_by_type ON memory (entry_type, superseded_at);
CREATE INDEX memory_by_scope ON memory (scope, superseded_at);
CREATE INDEX memory_by_successor ON memory (superseded_by);
CREATE INDEX memory_by_source ON memory (source, superseded_at);
CREATE INDEX memory_by_touch ON memory (scope, updated_at);

-- Exact tokens matter (tickers, invoice numbers, surnames), so no stemming here.
CREATE VIRTUAL TABLE memory_fts USING fts5 (
    content,
    content = 'memory',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER memory_ai AFTER INSERT ON memory BEGIN
    INSERT INTO memory_fts (rowid, content) VALUES (new.seq, new.content);
END;

CREATE TRIGGER memory_ad AFTER DELETE ON memory BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;

CREATE TRIGGER memory_au AFTER UPDATE OF content ON memory BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO memory_fts (rowid, content) VALUES (new.seq, new.content);
END;

CREATE TABLE event_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    memory_id TEXT,
    scope TEXT,
    source TEXT,
    -- Hashes and kinds only, never memory content.
    detail TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX event_log_by_memory ON event_log (memory_id);

CREATE TRIGGER event_log_no_update BEFORE UPDATE ON event_log BEGIN
    SELECT RAISE(ABORT, 'event_log is append-only');
END;

CREATE TRIGGER event_log_no_delete BEFORE DELETE ON event_log BEGIN
    SELECT RAISE(ABORT, 'event_log is append-only');
END;

CREATE TABLE skills (
    id TEXT PRIMARY KEY,
    slug TEXT NOT NULL,
    scope TEXT NOT NULL,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_at REAL NOT NULL,
    superseded_at REAL,
    superseded_by TEXT
);

CREATE UNIQUE INDEX skills_current ON skills (scope, slug) WHERE superseded_at IS NULL;
CREATE UNIQUE INDEX skills_by_version ON skills (scope, slug, version);
