-- Message ids a forget found, kept a short while: a receipt written after the forget (its recall
-- read the message before) turns them into forgotten marks in its own batch. Only ids found in
-- memory are kept (they passed the secret gate when stored); old rows go with the key's next
-- forget and the nightly receipt trim.
CREATE TABLE forgotten_refs (
    key_id TEXT NOT NULL,
    ref TEXT NOT NULL,
    session_id TEXT NOT NULL, -- '' when forgotten in every vault of the key
    forgotten_at REAL NOT NULL,
    PRIMARY KEY (key_id, ref, session_id)
);
CREATE INDEX forgotten_refs_by_time ON forgotten_refs (forgotten_at);
