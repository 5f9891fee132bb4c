import type { EnvironmentBody } from '@sandcast/contracts';

type Durability = EnvironmentBody['spec']['durability'];

/** Each durability in the operator's words (the spec editor and the agents' binding overrides). */
const DURABILITY_WORDS: Record<Durability, string> = {
  none: 'None: the workspace goes with the compute',
  provider_snapshot: 'Provider snapshot',
  checkpointed: 'Checkpointed: the workspace survives a replacement',
};

export const DURABILITY_OPTIONS = Object.entries(DURABILITY_WORDS) as [Durability, string][];
