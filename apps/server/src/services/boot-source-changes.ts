/**
 * In-process notices that what an environment boots from may have changed (an edit or rollback of
 * the environment, a capture, rollback, disable or relink of its image; `null`: every
 * environment, as after a settings change that moves the boot policy). Sent after the change
 * commits. Caches of boot targets drop their entry; they never rely on it for correctness, since
 * another server sharing the database sends this server nothing (ADR 0035).
 */
export interface BootSourceChanges {
  changed(environmentId: string | null): void;
  onChanged(listener: (environmentId: string | null) => void): () => void;
}

export function createBootSourceChanges(): BootSourceChanges {
  const listeners = new Set<(environmentId: string | null) => void>();
  return {
    changed(environmentId) {
      for (const listener of listeners) listener(environmentId);
    },
    onChanged(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
