-- Activity rows written in the same instant still list in the order they were written.
ALTER TABLE activity ADD COLUMN seq bigserial;
CREATE INDEX activity_seq_idx ON activity (seq DESC);
