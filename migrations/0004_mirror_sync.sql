-- The mirror is derived from each vault's change log. A vault's row here records the last log entry
-- the mirror applied (synced_seq; negative while the mirror of that vault is being rebuilt). Every
-- update of synced_seq names the value it replaces in claimed_seq, in the same batch as the
-- entries it applies: two syncs of one vault racing each other cannot both apply, so entries are
-- applied once and in order, and the loser's whole batch is rolled back.
ALTER TABLE vaults ADD COLUMN synced_seq INTEGER NOT NULL DEFAULT 0;

ALTER TABLE vaults ADD COLUMN claimed_seq INTEGER NOT NULL DEFAULT 0;

ALTER TABLE vaults ADD COLUMN rebuild_started REAL;

CREATE TRIGGER vaults_sync_in_order BEFORE UPDATE OF synced_seq ON vaults
WHEN OLD.synced_seq IS NOT NEW.claimed_seq
BEGIN
    SELECT RAISE(ABORT, 'memvault: another sync of this vault got there first');
END;
