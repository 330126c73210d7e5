-- The journal of routed calls: what a call the router relayed still owes the stores. A row is
-- opened beside the call's receipt while the provider answers (the usage so far) and completed
-- before the answer's last bytes reach the client (the turn to store, through the secret gate,
-- and the provider's counts); once the turn is stored, the usage added and the receipt completed,
-- the row goes. Rows a crash left behind are settled at the local server's start and nightly.
CREATE TABLE routed_calls (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL,
    session_id TEXT,
    created_at REAL NOT NULL,
    model TEXT,
    receipt_id TEXT,
    usage TEXT NOT NULL,
    answered INTEGER NOT NULL DEFAULT 0,
    forwarding_ms REAL,
    provider_tokens TEXT,
    question TEXT,
    answer TEXT
);
CREATE INDEX routed_calls_by_time ON routed_calls (created_at);
CREATE INDEX routed_calls_by_key ON routed_calls (key_id, session_id);
