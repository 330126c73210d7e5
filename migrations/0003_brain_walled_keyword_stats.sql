-- Keyword scores are BM25 over the rows a reader may see: the FTS5 index is shared by every
-- scope, so FTS5's own statistics would count walled rows and leak their number. A reader's row
-- count and total length come from this covering index alone, without reading any content.
-- Lengths are in characters: a stable, tokenizer-free measure for BM25's length normalisation.
ALTER TABLE memory ADD COLUMN content_chars INTEGER GENERATED ALWAYS AS (length(content)) VIRTUAL;

CREATE INDEX memory_by_scope_length ON memory (scope, superseded_at, entry_type, valid_from, content_chars);

-- The index above starts with the same two columns.
DROP INDEX memory_by_scope;
