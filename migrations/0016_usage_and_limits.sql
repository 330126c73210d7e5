-- Per-key limits, read with the key itself (the lookup that authenticates a call brings them, so
-- a key without limits costs its calls nothing more). NULL: no limit.
ALTER TABLE memory_keys ADD COLUMN requests_per_minute INTEGER;

ALTER TABLE memory_keys ADD COLUMN provider_tokens_per_day INTEGER;

ALTER TABLE memory_keys ADD COLUMN memory_tokens_per_day INTEGER;

-- Usage per memory key, UTC day and model ('' for calls that name none, such as searches): each
-- accounted call adds its counts to its row with one upsert.
CREATE TABLE IF NOT EXISTS usage_days (
  key_id TEXT NOT NULL,
  day TEXT NOT NULL,
  model TEXT NOT NULL DEFAULT '',
  calls INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cached_tokens INTEGER NOT NULL DEFAULT 0,
  memory_tokens INTEGER NOT NULL DEFAULT 0,
  messages_stored INTEGER NOT NULL DEFAULT 0,
  tokens_stored INTEGER NOT NULL DEFAULT 0,
  embeddings INTEGER NOT NULL DEFAULT 0,
  embedding_tokens INTEGER NOT NULL DEFAULT 0,
  searches INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, day, model)
);

CREATE INDEX IF NOT EXISTS usage_days_by_day ON usage_days (day);

-- Requests admitted for a key in its current UTC minute: one row a key, started afresh when the
-- minute changes, so it never grows.
CREATE TABLE IF NOT EXISTS usage_minutes (
  key_id TEXT PRIMARY KEY,
  minute INTEGER NOT NULL,
  calls INTEGER NOT NULL
);
