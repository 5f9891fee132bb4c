-- Ports of a setup session's sandbox opened as URLs. The same columns, checks and key as
-- sandbox_ports (one repository serves both), in a table of their own so that each row cascades
-- with its setup session: ending the session deletes its rows, deleting the session takes them too.
CREATE TABLE setup_session_ports (LIKE sandbox_ports INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
ALTER TABLE setup_session_ports RENAME COLUMN sandbox_id TO setup_session_id;
ALTER TABLE setup_session_ports
  ADD CONSTRAINT setup_session_ports_setup_session_id_fkey
  FOREIGN KEY (setup_session_id) REFERENCES environment_custom_image_setup_sessions(id) ON DELETE CASCADE;
