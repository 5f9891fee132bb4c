import type { SandcastClient } from '@sandcast/client';
import type { EnvironmentBody } from '@sandcast/contracts';

/** What a binding's exact revision id stands for, in the words an operator knows it by. */
export interface RevisionInfo {
  environmentName: string;
  number: number;
  /** The environment's current revision number, to say how far behind a binding is. */
  currentNumber: number;
  durability: EnvironmentBody['spec']['durability'];
}

/**
 * Finds the environment and number of each revision id: current revisions from the list, older
 * ones from the revisions of every environment (only when some id is not a current one).
 */
export async function revisionIndex(client: SandcastClient, ids: Iterable<string>): Promise<Map<string, RevisionInfo>> {
  const wanted = new Set(ids);
  const index = new Map<string, RevisionInfo>();
  if (wanted.size === 0) return index;
  // Environments may be switched off; the ids alone will do then.
  const environments = await client.environments.list().catch(() => []);
  for (const e of environments) {
    if (wanted.has(e.currentRevision.id)) {
      const n = e.currentRevision.number;
      index.set(e.currentRevision.id, { environmentName: e.name, number: n, currentNumber: n, durability: e.spec.durability });
    }
  }
  if ([...wanted].every((id) => index.has(id))) return index;
  const histories = await Promise.all(
    environments.map(async (e) => ({ e, revisions: await client.environments.revisions(e.id).catch(() => []) })),
  );
  for (const { e, revisions } of histories) {
    for (const r of revisions) {
      if (wanted.has(r.id) && !index.has(r.id))
        index.set(r.id, {
          environmentName: e.name,
          number: r.number,
          currentNumber: e.currentRevision.number,
          durability: r.spec.durability,
        });
    }
  }
  return index;
}

/** "build rev 3 (current)", "build rev 2 (current is 4)", or the bare id when it is not found. */
export function describeRevision(id: string, index: Map<string, RevisionInfo>): string {
  const info = index.get(id);
  if (!info) return id;
  const currency = info.number === info.currentNumber ? 'current' : `current is ${info.currentNumber}`;
  return `${info.environmentName} rev ${info.number} (${currency})`;
}
