-- One key store for every secret memvault issues: a row is a memory key (`mk_…`, names whose
-- conversation memory a request reads and writes) or a brain credential (names the scopes it may
-- read, and whether it may write). Both are stored as the sha256 of the secret only; `label` is a
-- brain credential's name. `scopes` is a JSON array of scope names (brain credentials only).
ALTER TABLE memory_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'memory' CHECK (kind IN ('memory', 'brain'));

ALTER TABLE memory_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '[]';

ALTER TABLE memory_keys ADD COLUMN writer INTEGER NOT NULL DEFAULT 0 CHECK (writer IN (0, 1));
