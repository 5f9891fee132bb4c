import { randomBytes } from 'node:crypto';
import type { CreatedSandbox, ForkTarget } from '@sandcast/provider-sdk';
import { ProviderError } from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import {
  ENGINE_CALL_DEADLINE_MS,
  type EnginePool,
  formatInstanceId,
  PROVIDER_ID,
  statusOf,
  toProviderError,
  withDeadline,
} from './connection.ts';
import { type ContainerHandle, removeContainer } from './containers.ts';
import { LABEL } from './labels.ts';

/** How long the commit of a fork may take (it pauses the source meanwhile). */
const FORK_COMMIT_DEADLINE_MS = 180_000;

/**
 * Forks a running container: `docker commit` (the source paused for the commit, under the capture
 * gate so no exec starts into the pause), then one container per target from that image with the
 * source's own settings (limits, network, disk, entrypoint) and ownership labels of its own. All
 * or nothing: a fork that cannot start removes the ones made. The image is untagged; the last fork
 * to be removed takes it along (`removeContainer` reads the fork label).
 */
export async function forkContainer(pool: EnginePool, handle: ContainerHandle, targets: ForkTarget[]): Promise<CreatedSandbox[]> {
  const { docker, container, engineUrl } = handle;
  let info: Docker.ContainerInspectInfo;
  try {
    info = await withDeadline(container.inspect(), ENGINE_CALL_DEADLINE_MS, { action: 'inspect the sandbox to fork', engineUrl });
  } catch (error) {
    if (statusOf(error) === 404) {
      throw new ProviderError({
        provider: PROVIDER_ID,
        code: 'not_found',
        message: `sandbox ${handle.instanceId} does not exist; create a new one`,
      });
    }
    throw toProviderError(error, { action: 'inspect the sandbox to fork', engineUrl });
  }
  if (!info.State.Running || info.State.Paused) {
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'not_running',
      message: `sandbox ${handle.instanceId} is not running; start it first`,
    });
  }
  const commit = () =>
    withDeadline(container.commit({ pause: true, comment: `sandcast fork of ${info.Id.slice(0, 12)}` }), FORK_COMMIT_DEADLINE_MS, {
      action: 'commit the sandbox to fork',
      engineUrl,
    }) as Promise<{ Id: string }>;
  let imageId: string;
  try {
    imageId = (await (handle.gate ? handle.gate.capture(info.Id, commit) : commit())).Id;
  } catch (error) {
    throw toProviderError(error, { action: 'commit the sandbox to fork', engineUrl });
  }
  const labels = info.Config.Labels ?? {};
  const startOne = async (target: ForkTarget): Promise<string> => {
    const created = await docker.createContainer({
      name: `sandcast-sandbox-fork-${randomBytes(6).toString('hex')}`,
      Image: imageId,
      Entrypoint: info.Config.Entrypoint ?? undefined,
      Cmd: info.Config.Cmd ?? [],
      WorkingDir: info.Config.WorkingDir,
      Hostname: info.Config.Hostname,
      Env: info.Config.Env,
      Labels: { ...labels, [LABEL.sandbox]: target.sandboxId, [LABEL.forkImage]: 'true' },
      HostConfig: info.HostConfig,
    });
    try {
      await withDeadline(created.start(), ENGINE_CALL_DEADLINE_MS, { action: 'start a fork', engineUrl });
    } catch (error) {
      await created.remove({ force: true, v: true }).catch(() => undefined);
      throw error;
    }
    return formatInstanceId(created.id, engineUrl, pool);
  };
  const outcomes = await Promise.allSettled(targets.map(startOne));
  const made = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) {
    for (const instanceId of made) await removeContainer(pool, instanceId).catch(() => undefined);
    await docker
      .getImage(imageId)
      .remove()
      .catch(() => undefined);
    throw toProviderError(failed.reason, { action: 'start the forks', engineUrl });
  }
  return made.map((instanceId) => ({ instanceId }));
}
