import { appendFile, chmod, lstat, mkdir, readdir, readFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { hostDirKey, newDiskSteps, overlaySteps } from './boot-steps.ts';
import type { Cgroups } from './cgroups.ts';
import type { LocalConfig } from './config.ts';
import type { InstanceDisks } from './disk.ts';
import { localError } from './errors.ts';
import { removeTree } from './fs-util.ts';
import type { ImageConfig, ImageRecord } from './image-types.ts';
import { type Layout, writeJsonAtomic } from './layout.ts';
import { mountsUnder, unmount } from './overlay.ts';
import { type PhaseSink, timed } from './phases.ts';
import { killQuietly, processStartTime, sleep } from './proc.ts';
import { type BootedAgent, HOSTNAME, INIT_GONE, INIT_OOM_SCORE_ADJ, type SandboxSpawnSpec, startInit } from './runtime.ts';

/** Sandbox processes' score when the init could not get -1000: above the init's 0 (raising needs no privilege). */
const EXEC_OOM_SCORE_ADJ = 500;

/** `instances/<id>/instance.json`: everything needed to reach, list and tear down a sandbox. */
export interface InstanceRecord {
  id: string;
  kind: 'sandbox' | 'setup';
  /** The Sandcast sandbox id or setup session id. */
  ownerId: string;
  environmentId: string;
  imageId: string;
  layers: string[];
  hostDirs: string[];
  imageConfig: ImageConfig;
  config: LocalConfig;
  initPid: number;
  initStartTime: number;
  /** The init's oom_score_adj as read back after start (-1000 unless the host lacks CAP_SYS_RESOURCE). */
  initOomScoreAdj?: number | undefined;
  /** Size of the instance's own filesystem holding its upper dirs; absent for instances made before it existed. */
  diskMb?: number | undefined;
  /** The disk file is `disks/<id>.img` (a store that clones files), not `instances/<id>/disk.img`. */
  diskStore?: boolean | undefined;
  /** Stopped on request: no processes, no mounts, its disk kept for a later start. */
  stopped?: boolean | undefined;
  createdAt: string;
}

/** What every instance's processes need from the provider. */
export interface RuntimeFiles {
  seccompPath: string;
  /** The sandcast-init binary (known once availability was checked). */
  initBinary: () => string;
  /** Where failures that do not stop a sandbox from working are reported. */
  warn: (message: string) => void;
  /** sandcast-boot (native/sandcast-boot.c; known once availability was checked). */
  bootBinary: () => string;
  /** The exec agent's binary for the init to fork, or null (no agent at start: execs start one, or run the old way). */
  agentBinary: () => Promise<string | null>;
  /** Takes over the agent a start's init forked (ADR 0034), or starts one the old way when there is none; never throws. */
  adoptAgent: (record: InstanceRecord, agent: BootedAgent | null) => Promise<void>;
  /** Where the steps of a start report their time (ADR 0034); none measured without it. */
  phase?: PhaseSink | undefined;
}

/** The exec agent's own cgroup (a child of the sandbox's, beside `init` and the per-exec `x…` groups). */
export const AGENT_GROUP = 'agent';

const ID_PATTERN = /^(sbx|stp)-[0-9a-f]{16}$/;

/**
 * Sandboxes on disk and in the kernel: overlay mounts under `instances/<id>/`, a cgroup, and a
 * detached init. The record is written last, so an instance without one is a half-created
 * leftover and is removed on start.
 */
/**
 * What a command's stderr says when the sandbox's init was exiting under it: its pid namespace
 * refuses forks (bwrap's ENOMEM), its namespaces are already closed while its pid still reads
 * alive (nsenter cannot open them), or the exec wrapper saw it go.
 */
export function looksLikeInitExiting(stderr: string): boolean {
  return (
    /^bwrap: Can't fork: Cannot allocate memory/m.test(stderr) ||
    /^nsenter: cannot open \/proc\/\d+\/ns\/[a-z_]+: No such file or directory/m.test(stderr) ||
    stderr.includes(INIT_GONE)
  );
}

export class Instances {
  constructor(
    private readonly layout: Layout,
    private readonly cgroups: Cgroups,
    private readonly runtime: RuntimeFiles,
    readonly disks: InstanceDisks,
  ) {}

  private warnedOom = false;

  dir(id: string): string {
    return join(this.layout.instances, id);
  }

  /** The directory holding upper and work dirs: the instance's own disk, or (older instances) its dir. */
  private writable(record: Pick<InstanceRecord, 'id' | 'diskMb'>): string {
    return record.diskMb ? join(this.dir(record.id), 'disk') : this.dir(record.id);
  }

  upperDirs(record: Pick<InstanceRecord, 'id' | 'hostDirs' | 'diskMb'>): Array<{ sandboxPath: string; dir: string }> {
    const base = this.writable(record);
    return [
      { sandboxPath: '/', dir: join(base, 'upper') },
      ...record.hostDirs.map((hostDir) => ({ sandboxPath: hostDir, dir: join(base, 'host', hostDirKey(hostDir), 'upper') })),
    ];
  }

  async load(id: string): Promise<InstanceRecord | null> {
    if (!ID_PATTERN.test(id)) return null;
    try {
      return JSON.parse(await readFile(join(this.dir(id), 'instance.json'), 'utf8')) as InstanceRecord;
    } catch {
      return null;
    }
  }

  async isAlive(record: InstanceRecord): Promise<boolean> {
    return (await processStartTime(record.initPid)) === record.initStartTime;
  }

  /** Why a recorded instance is not running: its init is gone, with the init's last words. */
  async initGone(record: InstanceRecord): Promise<string> {
    const log = (await readFile(join(this.dir(record.id), 'init.log'), 'utf8').catch(() => '')).trim().split('\n').at(-1);
    return `its init (pid ${record.initPid}) is gone (killed, or the machine restarted)${log ? `; init.log: ${log.slice(0, 300)}` : ''}`;
  }

  /**
   * Whether a failed command failed because the sandbox's init died under it. A pid namespace
   * whose init is exiting refuses forks with ENOMEM while the init's pid still reads alive for a
   * moment: then wait (bounded) for it to go. (A full pids limit gives EAGAIN, not this.)
   */
  async diedDuring(record: InstanceRecord, stderr: string): Promise<boolean> {
    if (!(await this.isAlive(record))) return true;
    if (!looksLikeInitExiting(stderr)) return false;
    for (let attempt = 0; attempt < 100; attempt++) {
      if (!(await this.isAlive(record))) return true;
      await sleep(10);
    }
    return false;
  }

  /** The record of a live instance, or null (unknown, torn down, or its init is gone). */
  async live(id: string): Promise<InstanceRecord | null> {
    const record = await this.load(id);
    return record && (await this.isAlive(record)) ? record : null;
  }

  async start(params: {
    id: string;
    kind: InstanceRecord['kind'];
    ownerId: string;
    environmentId: string;
    image: ImageRecord;
    config: LocalConfig;
    layersDir: string;
    /** The disk is already in the store, cloned from a fork's source: mounted as it is. */
    clonedDisk?: boolean | undefined;
  }): Promise<InstanceRecord> {
    const { id, image, config } = params;
    const dir = this.dir(id);
    const disk = join(dir, 'disk');
    const phase = this.runtime.phase;
    try {
      await timed(phase, 'dirs', async () => {
        await mkdir(dir);
        await mkdir(join(dir, 'rootfs'));
      });
      let made: Promise<{ file: string; diskStore: boolean }> | null = null;
      if (params.clonedDisk) {
        await this.disks.mount({ id, diskStore: true }, disk);
        await this.clearVolatileMarks({ id, hostDirs: image.hostDirs, diskMb: config.diskMb });
      } else {
        // A clone of the blank (or a formatted file), made beside the cgroups; sandcast-boot mounts it and makes its dirs.
        made = timed(phase, 'disk', () => this.disks.makeFile({ id, sizeMb: config.diskMb }));
        made.catch(() => undefined);
      }
      const base = {
        id,
        kind: params.kind,
        ownerId: params.ownerId,
        environmentId: params.environmentId,
        imageId: image.id,
        layers: image.layers,
        hostDirs: image.hostDirs,
        imageConfig: image.config,
        config,
        diskMb: config.diskMb,
        createdAt: new Date().toISOString(),
      };
      const newDisk = made?.then(({ file }) => newDiskSteps({ file, disk, hostDirs: image.hostDirs })) ?? null;
      const { agent, ...started } = await this.boot(base, params.layersDir, newDisk);
      const diskStore = made ? (await made).diskStore : true;
      const record: InstanceRecord = { ...base, ...(diskStore ? { diskStore } : {}), ...started };
      await Promise.all([
        timed(phase, 'record', () => writeJsonAtomic(join(dir, 'instance.json'), record)),
        timed(phase, 'agent', () => this.runtime.adoptAgent(record, agent)),
      ]);
      return record;
    } catch (error) {
      await this.teardown(id);
      throw error;
    }
  }

  /**
   * A `volatile` overlay leaves a marker in its work dir and refuses to mount over it again; a disk
   * that was unmounted cleanly (a stop) or frozen (a fork's clone) holds its data, so the marker
   * says nothing there.
   */
  private async clearVolatileMarks(record: Pick<InstanceRecord, 'id' | 'hostDirs' | 'diskMb'>): Promise<void> {
    for (const { dir } of this.upperDirs(record)) await removeTree(join(dirname(dir), 'work', 'work', 'incompat'));
  }

  /**
   * Mounts the rootfs overlays over the instance's upper dirs (and first its new disk, given its
   * steps) and starts its init in a fresh cgroup, all in one host process (sandcast-boot, ADR
   * 0034): the part of a start that a stopped instance repeats (its disk already holds its files).
   */
  private async boot(
    record: Omit<InstanceRecord, 'initPid' | 'initStartTime' | 'initOomScoreAdj' | 'stopped'>,
    layersDir: string,
    newDisk: Promise<string[]> | null,
  ): Promise<Pick<InstanceRecord, 'initPid' | 'initStartTime' | 'initOomScoreAdj'> & { agent: BootedAgent | null }> {
    const { id, config } = record;
    const dir = this.dir(id);
    const rootfs = join(dir, 'rootfs');
    const phase = this.runtime.phase;
    const [procsFiles, diskSteps, mountSteps, agentBinary] = await Promise.all([
      timed(phase, 'cgroups', async () => {
        await this.cgroups.createSandbox(id, config);
        const [init] = await Promise.all([this.cgroups.createChild(id, 'init'), this.cgroups.createChild(id, AGENT_GROUP)]);
        return init;
      }),
      newDisk ?? [],
      overlaySteps({ layers: record.layers, hostDirs: record.hostDirs, writable: this.writable(record), rootfs, layersDir }),
      this.runtime.agentBinary(),
    ]);
    const init = await timed(phase, 'init', () =>
      startInit({
        rootfs,
        network: config.network,
        seccompPath: this.runtime.seccompPath,
        initBinary: this.runtime.initBinary(),
        boot: { binary: this.runtime.bootBinary(), steps: ['fifo', join(dir, 'hold'), ...diskSteps, ...mountSteps] },
        agentBinary,
        procsFiles,
        env: { PATH: record.imageConfig.env.PATH ?? '/usr/bin:/bin' },
        cwd: '/',
        holdFifo: join(dir, 'hold'),
        logFile: join(dir, 'init.log'),
        phase,
      }),
    );
    try {
      const { initPid } = init;
      const [initStartTime] = await Promise.all([
        processStartTime(initPid),
        // Nothing runs in the sandbox yet (the agent waits for requests): the workdir is made now.
        timed(phase, 'workdir', () => ensureDirInside(rootfs, config.workdir)),
      ]);
      if (initStartTime === null) throw new Error(`the sandbox init exited at once; see ${join(dir, 'init.log')}`);
      if (init.oomError) {
        await appendFile(join(dir, 'init.log'), `${init.oomError}\n`);
        if (!this.warnedOom) {
          this.warnedOom = true;
          this.runtime.warn(
            `${init.oomError}; sandbox processes run with oom_score_adj ${EXEC_OOM_SCORE_ADJ} so the OOM killer picks them before the init`,
          );
        }
      }
      return { initPid, initStartTime, initOomScoreAdj: init.oomScoreAdj, agent: init.agent };
    } catch (error) {
      init.agent?.socket.destroy();
      throw error;
    }
  }

  /**
   * Stops an instance and keeps its disk: the record says `stopped` first (so a crash halfway
   * leaves a stopped instance, never a lost one), then its processes, cgroup and mounts go.
   * Null when there is no such instance or its init is already gone (it was lost, not stopped).
   */
  async stop(id: string): Promise<InstanceRecord | null> {
    const record = await this.load(id);
    if (!record) return null;
    if (!record.stopped) {
      if (!(await this.isAlive(record))) return null;
      await writeJsonAtomic(join(this.dir(id), 'instance.json'), { ...record, stopped: true });
    }
    await this.halt(record);
    if (record.diskMb) await this.disks.sync(record);
    return { ...record, stopped: true };
  }

  /**
   * Starts a stopped instance again over the same layers and disk, under the same id (a running
   * one is returned as it is). Null when there is no such instance or it was lost. A start that
   * fails leaves it stopped, its disk intact.
   */
  async restart(id: string, layersDir: string): Promise<InstanceRecord | null> {
    const record = await this.load(id);
    if (!record) return null;
    if (!record.stopped) return (await this.isAlive(record)) ? record : null;
    await this.halt(record);
    const writable = this.writable(record);
    try {
      if (record.diskMb) await this.disks.mount(record, writable);
      await this.clearVolatileMarks(record);
      const { agent, ...booted } = await this.boot(record, layersDir, null);
      const started: InstanceRecord = { ...record, ...booted, stopped: false };
      await Promise.all([writeJsonAtomic(join(this.dir(id), 'instance.json'), started), this.runtime.adoptAgent(started, agent)]);
      return started;
    } catch (error) {
      await this.halt(record);
      throw error;
    }
  }

  /** Ends the processes of an instance and releases its cgroup and mounts, leaving its files. */
  private async halt(record: InstanceRecord): Promise<void> {
    await this.stopProcesses(record);
    await this.cgroups.removeSandbox(record.id);
    await this.unmountAll(record.id);
  }

  /** The oom_score_adj sandbox processes are given: none (they inherit) when the init holds -1000, else above the init's. */
  execOomScore(record: Pick<InstanceRecord, 'initOomScoreAdj'>): number | null {
    return record.initOomScoreAdj === INIT_OOM_SCORE_ADJ ? null : EXEC_OOM_SCORE_ADJ;
  }

  spawnSpec(
    record: InstanceRecord,
    options: {
      command: string[];
      cwd?: string | undefined;
      env?: Record<string, string> | undefined;
      procsFiles: string[];
      newSession: boolean;
    },
  ): SandboxSpawnSpec {
    return {
      rootfs: join(this.dir(record.id), 'rootfs'),
      network: record.config.network,
      seccompPath: this.runtime.seccompPath,
      procsFiles: options.procsFiles,
      env: { HOME: '/root', HOSTNAME, ...record.imageConfig.env, ...record.config.env, ...options.env },
      cwd: sandboxPath(options.cwd ?? record.config.workdir),
      oomScoreAdj: this.execOomScore(record),
      initPid: record.initPid,
      initStartTime: record.initStartTime,
      command: options.command,
      newSession: options.newSession,
    };
  }

  /** Kills every process of the instance and waits until they are gone. */
  async stopProcesses(record: Pick<InstanceRecord, 'id' | 'initPid' | 'initStartTime'>): Promise<void> {
    if ((await processStartTime(record.initPid)) === record.initStartTime) killQuietly(record.initPid);
    await this.cgroups.kill(record.id, null);
    for (let i = 0; i < 200 && (await processStartTime(record.initPid)) === record.initStartTime; i++) await sleep(5);
  }

  async unmountAll(id: string): Promise<void> {
    for (const point of await mountsUnder(this.dir(id))) await unmount(point);
  }

  /** Unmounts the rootfs overlays, leaving the instance's disk (its upper dirs) mounted. */
  async unmountOverlays(id: string): Promise<void> {
    for (const point of await mountsUnder(join(this.dir(id), 'rootfs'))) await unmount(point);
  }

  /** Removes processes, cgroups, mounts and files of an instance; fine for half-created or unknown ones. */
  async teardown(id: string): Promise<void> {
    const record = await this.load(id);
    if (record) await this.stopProcesses(record);
    await this.cgroups.removeSandbox(id);
    await this.unmountAll(id);
    if ((await mountsUnder(this.dir(id))).length > 0) return;
    await this.disks.remove(id);
    await removeTree(this.dir(id));
  }

  async ids(): Promise<string[]> {
    return (await readdir(this.layout.instances).catch(() => [])).filter((name) => ID_PATTERN.test(name));
  }

  /** Instances that hold their image: running ones and stopped ones (which start again over it). */
  async listKept(): Promise<InstanceRecord[]> {
    const records = await Promise.all((await this.ids()).map((id) => this.load(id)));
    const kept = await Promise.all(records.map(async (r) => (r && (r.stopped || (await this.isAlive(r))) ? r : null)));
    return kept.filter((r): r is InstanceRecord => r !== null);
  }

  /**
   * After a crash: tears down instances whose init is gone or whose record was never written.
   * Stopped instances are kept (`live` lists them with the running ones: both hold their image);
   * whatever a stop that was cut short left running or mounted is released.
   */
  async recover(): Promise<{ removed: string[]; live: InstanceRecord[] }> {
    const removed: string[] = [];
    const live: InstanceRecord[] = [];
    for (const name of await readdir(this.layout.instances).catch(() => [])) {
      const record = await this.load(name);
      if (record?.stopped) {
        await this.halt(record);
        live.push(record);
      } else if (record && (await this.isAlive(record))) live.push(record);
      else {
        await this.teardown(name);
        await removeTree(this.dir(name)).catch(() => undefined);
        removed.push(name);
      }
    }
    await this.disks.collect(new Set(live.map((r) => r.id)));
    const liveIds = new Set(live.filter((r) => !r.stopped).map((r) => r.id));
    for (const group of await this.cgroups.listSandboxes()) {
      if (!liveIds.has(group)) await this.cgroups.removeSandbox(group);
    }
    return { removed, live };
  }
}

/**
 * A path as the sandbox resolves it: absolute, `.` and `..` folded at its own root, so nothing
 * built from it on the host can leave the rootfs. NUL cannot be passed to a process: refused.
 */
function sandboxPath(path: string): string {
  if (path.includes('\0')) throw localError('invalid_config', 'a sandbox path may not contain NUL bytes');
  return posix.resolve('/', path);
}

/** mkdir -p inside a rootfs without following the rootfs's own symlinks onto the host, nor `..` out of it. */
async function ensureDirInside(rootfs: string, path: string): Promise<void> {
  let current = rootfs;
  for (const part of sandboxPath(path).split('/').filter(Boolean)) {
    current = join(current, part);
    const stat = await lstat(current).catch(() => null);
    if (!stat) {
      await mkdir(current);
      await chmod(current, 0o755); // not the server's umask
    } else if (!stat.isDirectory()) return;
  }
}
