-- The vectors of the messages in each vault's mirrored pending buffer, one row a message, so the
-- mirror's answer finds a pending message by meaning as its vault does. Derived like the rest of
-- the mirror: written with each buffer the vault's log carries, and by a rebuild. Buffers mirrored
-- before this table existed get their vectors at the next write to their vault.
CREATE TABLE mirror_buffer_vectors (
    key_id TEXT NOT NULL,
    vault TEXT NOT NULL,
    id TEXT NOT NULL,
    embedding BLOB NOT NULL,
    PRIMARY KEY (key_id, vault, id)
);
