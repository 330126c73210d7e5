-- Provider keys (OpenAI, Anthropic, Gemini) held for a memory key, so a routed call that carries
-- only the memory key reaches the provider with the stored one. `sealed` is the key encrypted with
-- AES-256-GCM under the deployment's MEMVAULT_PROVIDER_KEY_SECRET: `v1.<secret version>.<nonce>.
-- <ciphertext and tag>`, bound to its row's key_id and provider; the clear key is never stored.
-- `last4` is at most the key's last four characters, so a listing can tell keys apart.
CREATE TABLE IF NOT EXISTS provider_keys (
    key_id TEXT NOT NULL,
    provider TEXT NOT NULL CHECK (provider IN ('openai', 'anthropic', 'gemini')),
    sealed TEXT NOT NULL,
    last4 TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    PRIMARY KEY (key_id, provider)
);
