import type { Duplex } from 'node:stream';
import { ProviderError } from '@sandcast/provider-sdk';
import { openNamespacedPortStream } from '@sandcast/provider-sdk/port-forward';
import { ENGINE_CALL_DEADLINE_MS, PROVIDER_ID, toProviderError, withDeadline } from './connection.ts';
import type { ContainerHandle } from './containers.ts';

/**
 * The network namespace of the container's first process (`State.Pid`), for the port forwarder
 * and the egress relay. Only an engine on this machine (a unix socket) shares our /proc; a pid
 * from a remote engine would name some local process.
 */
export async function containerNetworkNamespace(handle: ContainerHandle): Promise<string> {
  if (!handle.engineUrl.startsWith('unix://')) {
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'unsupported',
      message: `ports and egress reach into sandboxes only on a Docker engine on this machine (a unix socket), not ${handle.engineUrl}`,
    });
  }
  let pid: number;
  try {
    const info = await withDeadline(handle.container.inspect(), ENGINE_CALL_DEADLINE_MS, {
      action: 'inspect a sandbox',
      engineUrl: handle.engineUrl,
    });
    pid = info.State.Running ? info.State.Pid : 0;
  } catch (error) {
    throw toProviderError(error, { action: 'inspect a sandbox', engineUrl: handle.engineUrl });
  }
  if (!pid)
    throw new ProviderError({ provider: PROVIDER_ID, code: 'not_running', message: 'the sandbox container is not running; recreate it' });
  return `/proc/${pid}/ns/net`;
}

/** A byte stream to `port` on the container's own loopback. */
export async function openContainerPortStream(handle: ContainerHandle, port: number): Promise<Duplex> {
  return openNamespacedPortStream({ provider: PROVIDER_ID, netnsPath: await containerNetworkNamespace(handle), port });
}
