-- The fact (or skill) a retire proposal keeps, so accepting it records the supersession chain;
-- NULL for a merge, whose successor is the merged fact written on accept.
ALTER TABLE proposals ADD COLUMN keep_id TEXT;
