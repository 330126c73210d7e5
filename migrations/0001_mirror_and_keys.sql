-- Memory keys (stored hashed), and the mirror of every conversation vault: its rows and its
-- pending buffer. The mirror answers when a vault cannot (cold start, outage).

CREATE TABLE memory_keys (
    id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL DEFAULT '',
    keep_archive INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    revoked_at REAL
);

CREATE TABLE mirror_rows (
    key_id TEXT NOT NULL,
    vault TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    role TEXT NOT NULL,
    model TEXT,
    ts_start REAL NOT NULL,
    ts_end REAL NOT NULL,
    token_count INTEGER NOT NULL,
    source_ids TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    parent_id TEXT,
    embedding BLOB,
    PRIMARY KEY (key_id, vault, id)
);

CREATE INDEX mirror_rows_by_time ON mirror_rows (key_id, vault, ts_end);

CREATE INDEX mirror_rows_by_parent ON mirror_rows (key_id, vault, parent_id);

CREATE VIRTUAL TABLE mirror_rows_fts USING fts5 (
    text,
    content = 'mirror_rows',
    content_rowid = 'rowid',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER mirror_rows_ai AFTER INSERT ON mirror_rows BEGIN
    INSERT INTO mirror_rows_fts (rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TRIGGER mirror_rows_ad AFTER DELETE ON mirror_rows BEGIN
    INSERT INTO mirror_rows_fts (mirror_rows_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;

CREATE TRIGGER mirror_rows_au AFTER UPDATE OF text ON mirror_rows BEGIN
    INSERT INTO mirror_rows_fts (mirror_rows_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO mirror_rows_fts (rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TABLE mirror_buffers (
    key_id TEXT NOT NULL,
    vault TEXT NOT NULL,
    messages TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    version INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (key_id, vault)
);

-- Every vault a key has written to, so clearing a key reaches its session vaults too.
CREATE TABLE vaults (
    key_id TEXT NOT NULL,
    vault TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (key_id, vault)
);
