import type Docker from 'dockerode';
import { type EnginePool, formatInstanceId, parseInstanceId, statusOf } from './connection.ts';
import { LABEL } from './labels.ts';

/**
 * A sandbox's disk limit (decision 0011). overlay2 on ext4 — the common case, and this project's
 * CI — refuses `--storage-opt size=` (it needs xfs mounted with `pquota`), so the limit is held two
 * ways whatever the storage driver:
 *
 * 1. in the kernel, per file: `RLIMIT_FSIZE` (`--ulimit fsize`) at the limit, so one file never
 *    grows past it (`dd`, a runaway log) — the write fails with EFBIG at once. Sandbox root cannot
 *    raise a hard rlimit without CAP_SYS_RESOURCE, which Docker never grants;
 * 2. in total: a watchdog measures every limited container's writable layer (`docker ps --size`)
 *    every few seconds and kills the container that wrote past its limit. Its next exec says why.
 *
 * Where the engine does support `size=` (xfs + pquota), the limit is also passed as a storage
 * option and the kernel enforces the total as well.
 */

/** Default disk limit when an environment sets none: enough for toolchains and caches. */
export const DEFAULT_DISK_MB = 10_240;
/** Default time between two measurements of the sandboxes' writable layers. */
export const DEFAULT_DISK_CHECK_INTERVAL_MS = 2_000;

const MIB = 1024 * 1024;

/** What a sandbox stopped for its disk limit answers from then on. */
function diskLimitReason(limitMb: number, writtenBytes: number): string {
  return `stopped for writing past its disk limit: ${Math.ceil(writtenBytes / MIB)} MiB written, limit ${limitMb} MiB (config diskMb); delete the sandbox and create a new one, with a larger diskMb if the work needs it`;
}

/** The HostConfig fields that hold a limit of `limitMb` in the kernel. */
export function diskHostConfig(limitMb: number, storageOptSupported: boolean): Partial<Docker.HostConfig> {
  const bytes = limitMb * MIB;
  return {
    Ulimits: [{ Name: 'fsize', Soft: bytes, Hard: bytes }],
    ...(storageOptSupported ? { StorageOpt: { size: `${limitMb}M` } } : {}),
  };
}

/** True when the engine refused a container because its storage driver cannot size a rootfs. */
export function isStorageOptUnsupported(error: unknown): boolean {
  const message = (error as { json?: { message?: string } } | null)?.json?.message ?? (error as Error | null)?.message ?? '';
  return statusOf(error) !== undefined && /storage-?opt/i.test(message);
}

export interface DiskWatchdog {
  /** One measurement of every limited, running container of this installation; returns the ones stopped. */
  check(): Promise<string[]>;
  /** Why a container was stopped, when this process stopped it. */
  reasonFor(instanceId: string): string | undefined;
  start(): void;
  stop(): void;
}

export function createDiskWatchdog(options: {
  pool: EnginePool;
  installation: string;
  intervalMs: number;
  /** Told about every container the watchdog stops. */
  onStop?: ((event: { instanceId: string; reason: string }) => void) | undefined;
  /** More upkeep run on the same timer, after each measurement (its failures are ignored). */
  alsoEachTick?: (() => Promise<unknown>) | undefined;
}): DiskWatchdog {
  const { pool, installation } = options;
  const reasons = new Map<string, string>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<string[]> | null = null;

  const checkEngine = async (url: string): Promise<string[]> => {
    const docker = pool.client(url);
    const containers = (await docker.listContainers({
      size: true,
      filters: { status: ['running'], label: [`${LABEL.managed}=true`, `${LABEL.installation}=${installation}`, LABEL.diskMb] },
    })) as Array<Docker.ContainerInfo & { SizeRw?: number }>;
    const stopped: string[] = [];
    for (const info of containers) {
      const limitMb = Number(info.Labels?.[LABEL.diskMb]);
      const written = info.SizeRw ?? 0;
      if (!Number.isFinite(limitMb) || limitMb <= 0 || written <= limitMb * MIB) continue;
      const instanceId = formatInstanceId(info.Id, url, pool);
      const reason = diskLimitReason(limitMb, written);
      reasons.set(instanceId, reason);
      try {
        await docker.getContainer(info.Id).kill({ signal: 'SIGKILL' });
      } catch (error) {
        // Already stopped or removed: nothing is writing any more.
        if (statusOf(error) !== 404 && statusOf(error) !== 409) throw error;
      }
      stopped.push(instanceId);
      options.onStop?.({ instanceId, reason });
    }
    return stopped;
  };

  const pass = async (): Promise<string[]> => {
    const stopped: string[] = [];
    for (const url of pool.urls()) {
      // An engine that is down has no sandbox writing to it; the next pass looks again.
      stopped.push(...(await checkEngine(url).catch(() => [] as string[])));
    }
    return stopped;
  };

  return {
    check() {
      running ??= pass().finally(() => {
        running = null;
      });
      return running;
    },
    reasonFor: (instanceId) => reasons.get(instanceId) ?? reasons.get(parseInstanceId(instanceId).containerId),
    start() {
      if (timer) return;
      timer = setInterval(() => {
        void this.check()
          .catch(() => undefined)
          .then(() => options.alsoEachTick?.())
          .catch(() => undefined);
      }, options.intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

/**
 * Why a stopped container stopped, when it was for its disk limit: read back from the container
 * itself (its label and its writable layer's size), so the reason survives a server restart.
 */
export async function diskStopReason(container: Docker.Container): Promise<string | undefined> {
  const withSize = { size: true } as Docker.ContainerInspectOptions;
  const info = (await container.inspect(withSize).catch(() => null)) as (Docker.ContainerInspectInfo & { SizeRw?: number }) | null;
  if (!info || info.State.Running) return undefined;
  const limitMb = Number(info.Config.Labels?.[LABEL.diskMb]);
  const written = info.SizeRw ?? 0;
  if (!Number.isFinite(limitMb) || limitMb <= 0 || written <= limitMb * MIB) return undefined;
  return diskLimitReason(limitMb, written);
}
