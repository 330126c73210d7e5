-- Generation counters of the read cache (core/read_cache.py): a write moves its counter in the
-- same batch, and cached reads name the counters they read in their cache keys, so a write makes
-- every older cached answer unreachable at once. One row per brain scope ("brain:<scope>").
CREATE TABLE IF NOT EXISTS cache_generations (
    name TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
);
