"""The vault schema, as ordered named migrations. A vault (a Durable Object's SQLite, or one local
SQLite file) applies the ones it has not seen, in order, in its constructor."""

from __future__ import annotations

from memvault.core.ports import SyncSql

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "0001_rows_buffer_meta",
        (
            """CREATE TABLE IF NOT EXISTS rows (
                id TEXT PRIMARY KEY,
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
                embedding BLOB
            )""",
            "CREATE UNIQUE INDEX IF NOT EXISTS rows_by_hash ON rows (kind, content_hash)",
            "CREATE INDEX IF NOT EXISTS rows_by_time ON rows (ts_end)",
            "CREATE INDEX IF NOT EXISTS rows_by_parent ON rows (parent_id)",
            """CREATE VIRTUAL TABLE IF NOT EXISTS rows_fts USING fts5 (
                text, content = 'rows', content_rowid = 'rowid', tokenize = 'porter unicode61'
            )""",
            """CREATE TRIGGER IF NOT EXISTS rows_ai AFTER INSERT ON rows BEGIN
                INSERT INTO rows_fts (rowid, text) VALUES (new.rowid, new.text);
            END""",
            """CREATE TRIGGER IF NOT EXISTS rows_ad AFTER DELETE ON rows BEGIN
                INSERT INTO rows_fts (rows_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
            END""",
            """CREATE TABLE IF NOT EXISTS buffer (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL,
                role TEXT NOT NULL,
                content TEXT NOT NULL,
                ts REAL NOT NULL,
                model TEXT,
                content_hash TEXT NOT NULL
            )""",
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ),
    ),
    (
        # Stats and the re-embed job count rows without a vector on every store: keep that off the blobs.
        "0002_unembedded_index",
        ("CREATE INDEX IF NOT EXISTS rows_unembedded ON rows (ts_end) WHERE embedding IS NULL",),
    ),
    (
        # A message row found by the id its sender gave it, and how much of a chunk's text is the
        # overlap carried from the chunk before: forget needs both to remove a message everywhere.
        "0003_message_ids_and_carry",
        (
            "ALTER TABLE rows ADD COLUMN message_id TEXT",
            "ALTER TABLE rows ADD COLUMN carry_chars INTEGER NOT NULL DEFAULT 0",
            "UPDATE rows SET message_id = json_extract(source_ids, '$[0]') WHERE kind = 'message'",
            "CREATE INDEX IF NOT EXISTS rows_by_message_id ON rows (message_id) WHERE message_id IS NOT NULL",
        ),
    ),
    (
        # The change log the mirror is derived from. It starts as if one entry had been applied and
        # trimmed, so a mirror that never applied one is behind the floor and is rebuilt once from
        # the vault: rows mirrored before the log existed are made exact, not trusted.
        "0004_change_log",
        (
            "CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, ids TEXT NOT NULL)",
            "INSERT INTO meta (key, value) VALUES ('log_head', '1'), ('log_floor', '1') ON CONFLICT (key) DO NOTHING",
        ),
    ),
    (
        # The same text said again is one message: how often, and under which other ids.
        "0005_occurrences_and_aliases",
        (
            "ALTER TABLE rows ADD COLUMN occurrences INTEGER NOT NULL DEFAULT 1",
            "ALTER TABLE buffer ADD COLUMN occurrences INTEGER NOT NULL DEFAULT 1",
            "CREATE TABLE IF NOT EXISTS aliases (message_id TEXT PRIMARY KEY, canonical TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS aliases_by_canonical ON aliases (canonical)",
        ),
    ),
    (
        # Each vector's binary code, the compact form searched in memory. Filled as vectors are
        # attached (older rows when the vault first searches); the log is moved on as if an entry
        # had been trimmed, so the mirror is rebuilt once and gets its codes too.
        "0006_vector_codes",
        (
            "ALTER TABLE rows ADD COLUMN code BLOB",
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key IN ('log_head', 'log_floor')",
        ),
    ),
    (
        # What the caller kept with each message (JSON text), returned when the vault is read.
        "0007_message_metadata",
        (
            "ALTER TABLE rows ADD COLUMN metadata TEXT",
            "ALTER TABLE buffer ADD COLUMN metadata TEXT",
        ),
    ),
    (
        # A pending message's vector, attached as soon as it is stored, so search finds it by
        # meaning before it is cut into a chunk; its row takes the same vector at the cut. Messages
        # pending before this have none: their rows are embedded when they are cut, as before.
        "0008_buffer_embeddings",
        (
            "ALTER TABLE buffer ADD COLUMN embedding BLOB",
            "ALTER TABLE buffer ADD COLUMN embed_at_cut INTEGER NOT NULL DEFAULT 0",
            "UPDATE buffer SET embed_at_cut = 1",
        ),
    ),
)


def migrate(sql: SyncSql) -> list[str]:
    """Apply pending migrations; returns the names applied. Only local SQL, no waiting on anything else."""
    sql.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)")
    done = {row["name"] for row in sql.execute("SELECT name FROM schema_migrations")}
    applied = []
    for name, statements in MIGRATIONS:
        if name in done:
            continue

        def apply(statements: tuple[str, ...] = statements, name: str = name) -> bool:
            # Asked again inside the write lock: another process opening the same new file may
            # have applied it since it was read above (a second ALTER TABLE would fail).
            if sql.execute("SELECT 1 AS hit FROM schema_migrations WHERE name = ?", (name,)):
                return False
            for statement in statements:
                sql.execute(statement)
            sql.execute("INSERT INTO schema_migrations (name) VALUES (?)", (name,))
            return True

        if sql.transaction(apply):
            applied.append(name)
    return applied
