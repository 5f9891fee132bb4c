import type { CapturedTemplate, ManagedInstance } from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import { ENGINE_CALL_DEADLINE_MS, type EnginePool, formatInstanceId, isUnreachable, toProviderError, withDeadline } from './connection.ts';
import { captureComment, LABEL, ownerOf } from './labels.ts';

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
      containers = await withDeadline(
        pool
          .client(url)
          .listContainers({ all: true, filters: { label: [`${LABEL.managed}=true`, `${LABEL.installation}=${installation}`] } }),
        ENGINE_CALL_DEADLINE_MS,
        { action: 'list Sandcast containers', engineUrl: url },
      );
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

/**
 * Every image a capture of this installation made, on the engines this provider knows: labelled
 * `sandcast.captured-by=<installation>`, with the comment a capture writes for its own
 * `sandcast.captured-from` (labels are inherited, the comment is not), and no name outside the
 * `sandcast/` repository (an operator's own tag keeps an image out of reach). The server removes
 * those whose setup session is over and that no custom image refers to.
 */
export async function listCapturedImages(pool: EnginePool, installation: string): Promise<CapturedTemplate[]> {
  const found: CapturedTemplate[] = [];
  for (const url of pool.urls()) {
    const docker = pool.client(url);
    let images: Docker.ImageInfo[];
    try {
      images = await withDeadline(
        docker.listImages({ filters: { label: [`${LABEL.capturedBy}=${installation}`] } }),
        ENGINE_CALL_DEADLINE_MS,
        {
          action: 'list captured images',
          engineUrl: url,
        },
      );
    } catch (error) {
      if (url !== pool.defaultAddress.url && isUnreachable(error)) continue;
      throw toProviderError(error, { action: 'list captured images', engineUrl: url });
    }
    for (const image of images) {
      const setupSessionId = image.Labels?.[LABEL.capturedFrom];
      if (!setupSessionId) continue;
      const names = (image.RepoTags ?? []).filter((tag) => tag !== '<none>:<none>');
      if (names.some((name) => !name.startsWith('sandcast/'))) continue;
      const details = await docker
        .getImage(image.Id)
        .inspect()
        .catch(() => null);
      if (!details || details.Comment !== captureComment(setupSessionId)) continue;
      found.push({
        template: { kind: 'image', ref: names[0] ?? image.Id, digest: image.Id, metadata: { engine: url } },
        refs: [...names, image.Id],
        setupSessionId,
      });
    }
  }
  return found;
}
