-- What a forget (or a clear) took from a routed call's row, kept even when the row never held that
-- message: a call still being answered, a turn too large for the journal, or an answer whose row
-- could not be written is stored from the process's memory, and settling it stores nothing marked
-- here and forgets again what was marked while the turn was being stored.
ALTER TABLE routed_calls ADD COLUMN question_forgotten INTEGER NOT NULL DEFAULT 0;

ALTER TABLE routed_calls ADD COLUMN answer_forgotten INTEGER NOT NULL DEFAULT 0;
