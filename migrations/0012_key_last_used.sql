-- When a request last authenticated with each key-store secret (memory key or brain credential),
-- noted at most once a minute per secret; NULL until its first use.
ALTER TABLE memory_keys ADD COLUMN last_used_at REAL;
