-- Receipts: what each routed call and each memory search recalled, by id only (texts stay in the
-- vaults, where forgetting reaches them). One row per receipt, and one per message id an item
-- named; forgetting a message sets its `ref` to NULL, so the receipt still shows that something
-- it named was forgotten. Kept `receipt_days` days (the nightly pass trims them).
CREATE TABLE receipts (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL,
    day TEXT NOT NULL,
    created_at REAL NOT NULL,
    surface TEXT NOT NULL,
    session_id TEXT,
    query TEXT,
    query_ref TEXT,
    details TEXT NOT NULL
);
CREATE INDEX receipts_by_key_day ON receipts (key_id, day, created_at);
CREATE INDEX receipts_by_time ON receipts (created_at);

CREATE TABLE receipt_items (
    receipt_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    injected INTEGER NOT NULL,
    kind TEXT NOT NULL,
    vault TEXT NOT NULL,
    ref TEXT,
    score REAL NOT NULL,
    tokens INTEGER NOT NULL,
    ts REAL NOT NULL
);
CREATE INDEX receipt_items_by_receipt ON receipt_items (receipt_id, injected, position);
CREATE INDEX receipt_items_by_ref ON receipt_items (key_id, ref);
