-- Each mirrored vector's binary code (one bit a dimension): the mirror's vector channel reads
-- these in pages, newest first, and rescores the nearest with the float vectors. Vaults rebuild
-- their mirrors once after this migration (their own log says so), which fills the column.
ALTER TABLE mirror_rows ADD COLUMN code BLOB;
