import type { ManagedInstance } from '@sandcast/provider-sdk';
import { type EnginePool, formatInstanceId, isUnreachable, toProviderError } from './connection.ts';
import { LABEL, ownerOf } from './labels.ts';

/**
 * Every container labelled `sandcast.managed=true` by this installation on the engines this provider knows. The
 * server's reconciler removes those whose sandbox or setup session no longer exists; containers
 * without the label are never listed, so they are never touched.
 */
export async function listManagedInstances(pool: EnginePool, installation: string): Promise<ManagedInstance[]> {
  const found: ManagedInstance[] = [];
  for (const url of pool.urls()) {
    let containers: Awaited<ReturnType<ReturnType<EnginePool['client']>['listContainers']>>;
    try {
      containers = await pool
        .client(url)
        .listContainers({ all: true, filters: { label: [`${LABEL.managed}=true`, `${LABEL.installation}=${installation}`] } });
    } catch (error) {
      // An extra engine that went away must not hide the default engine's containers.
      if (url !== pool.defaultAddress.url && isUnreachable(error)) continue;
      throw toProviderError(error, { action: 'list Sandcast containers', engineUrl: url });
    }
    for (const container of containers) {
      const owner = ownerOf(container.Labels);
      if (owner) found.push({ instanceId: formatInstanceId(container.Id, url, pool), ...owner });
    }
  }
  return found;
}
