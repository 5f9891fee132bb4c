import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  type Availability,
  type CaptureRequest,
  type CreatedSandbox,
  type CreateSandboxRequest,
  collectExecOutput,
  type ExecProcess,
  type ExecRequest,
  type ExecResult,
  type FileChange,
  type ForkTarget,
  type InstanceInfo,
  isProviderError,
  type ManagedInstance,
  ON_HOST_PROVIDER_CAPABILITIES,
  type ProviderContext,
  type PtyOptions,
  type PtyStream,
  resolveDirInsideRoot,
  type SandboxProvider,
  type SetupLease,
  type StartSetupRequest,
  type TemplateRef,
  type WriteFileOptions,
} from '@sandcast/provider-sdk';
import { openNamespacedPortStream } from '@sandcast/provider-sdk/port-forward';
import { asBaseImageStore } from './base-image-store.ts';
import { captureLease } from './capture.ts';
import { type Cgroups, detectCgroups } from './cgroups.ts';
import { listUpperChanges } from './changes.ts';
import { LOCAL_RUNTIME_KNOBS, type LocalConfig, localConfigSchema } from './config.ts';
import { InstanceDisks } from './disk.ts';
import { localError, PROVIDER_ID } from './errors.ts';
import { createExecPlumbing } from './exec.ts';
import { forkInstance, thawInterruptedForks } from './fork.ts';
import { removeTree } from './fs-util.ts';
import { ImageStore } from './image-store.ts';
import type { ImageRecord } from './image-types.ts';
import { type InstanceRecord, Instances, type RuntimeFiles } from './instances.ts';
import { ensureLayout, type Layout, layoutOf, newId } from './layout.ts';
import { createLocalImages, type LocalImageStoreApi } from './local-images.ts';
import { agentBinary, ensureBootBinary, ensureInitBinary } from './native-init.ts';
import { mountsUnder, unmount } from './overlay.ts';
import type { PhaseSink } from './phases.ts';
import { processStartTime, run, shellQuote } from './proc.ts';
import { ptyStream } from './pty.ts';
import { sandboxCommandLine } from './runtime.ts';
import { compileSeccompFilter } from './seccomp.ts';
import { stopSpawnerWhenIdle } from './spawner.ts';

export interface LocalProviderOptions extends ProviderContext {
  /** Layers an image may have before a capture squashes everything above its base. Default 16. */
  maxLayers?: number | undefined;
  /** Where faults that do not stop sandboxes are reported (an unprotected init). Default: `process.emitWarning`. */
  onWarning?: ((message: string) => void) | undefined;
  /**
   * Clone sandbox disks (ADR 0031): a fork clones its source's disk and a create clones a blank,
   * on the data dir's filesystem or an XFS pool made for it. False: every disk is formatted and a
   * fork copies the source's files. Default true.
   */
  diskClones?: boolean | undefined;
  /** Reports the steps of each sandbox start with their wall time (ADR 0034; the local benchmark's `--phases`). */
  onPhase?: PhaseSink | undefined;
}

export interface LocalProvider extends SandboxProvider {
  readonly images: LocalImageStoreApi;
}

/** What runs sandboxes: present only where cgroups work (see `availability()`). */
interface Runtime {
  cgroups: Cgroups;
  instances: Instances;
}

async function commandExists(name: string): Promise<boolean> {
  return (await run('/bin/sh', ['-c', `command -v ${name}`])).code === 0;
}

/** The `local` provider: bubblewrap sandboxes over overlayfs image layers (ARCHITECTURE §5). */
/** What a file write's failure may say (its stderr), at most. */
const WRITE_STDERR_BYTES = 64 * 1024;

export function createLocalProvider(options: LocalProviderOptions): LocalProvider {
  const layout: Layout = layoutOf(options.dataDir);
  const maxLayers = Math.max(2, options.maxLayers ?? 16);
  const store = new ImageStore(layout);
  // Per data dir, so two installations on one host never reap each other's groups.
  const cgroupName = `sandcast-local-${createHash('sha256').update(layout.root).digest('hex').slice(0, 12)}`;
  const cgroups: Cgroups | null = detectCgroups(cgroupName);
  // Set by the availability check, which builds them; nothing starts before it passed.
  const binaries: Record<'init' | 'boot', string | null> = { init: null, boot: null };
  const built = (name: 'init' | 'boot') => (): string => {
    const path = binaries[name];
    if (!path) throw localError('unavailable', `the sandbox ${name} binary is not built yet; the availability check builds it`);
    return path;
  };
  const warn = options.onWarning ?? ((message: string) => process.emitWarning(message, { code: 'SANDCAST_LOCAL_RUNTIME' }));
  const disks = new InstanceDisks(layout, { clones: options.diskClones !== false, warn });
  // Bound below, once the exec plumbing exists (it needs the runtime to be ready first).
  let adoptAgent: RuntimeFiles['adoptAgent'] = async () => undefined;
  const runtimeFiles: RuntimeFiles = {
    seccompPath: layout.seccomp,
    initBinary: built('init'),
    bootBinary: built('boot'),
    // SANDCAST_LOCAL_EXEC_AGENT=off: no agent at start either (read per start, like per exec).
    agentBinary: async () => (process.env.SANDCAST_LOCAL_EXEC_AGENT === 'off' ? null : agentBinary()),
    adoptAgent: (record, agent) => adoptAgent(record, agent),
    warn,
    phase: options.onPhase,
  };
  // Null when this machine has no usable cgroups: availability() then says why, and nothing runs.
  const runtime: Runtime | null = cgroups ? { cgroups, instances: new Instances(layout, cgroups, runtimeFiles, disks) } : null;
  const background = new Set<Promise<void>>();
  let availability: Promise<Availability> | null = null;
  let ready: Promise<Runtime> | null = null;

  const checkAvailability = async (): Promise<Availability> => {
    if (process.platform !== 'linux') return { available: false, reason: 'the local provider needs Linux (namespaces and overlayfs)' };
    if (process.getuid?.() !== 0)
      return { available: false, reason: 'the local provider needs root to mount overlays and create namespaces; run the server as root' };
    if (!(await commandExists('bwrap')))
      return { available: false, reason: 'bubblewrap is not installed; install the Debian package with `apt-get install bubblewrap`' };
    if (!(await commandExists('nsenter')))
      return { available: false, reason: 'nsenter is missing; install the Debian package with `apt-get install util-linux`' };
    const filesystems = await readFile('/proc/filesystems', 'utf8').catch(() => '');
    if (!/\toverlay\n/.test(filesystems)) {
      const loaded = await run('modprobe', ['overlay']);
      if (loaded.code !== 0) return { available: false, reason: 'the kernel has no overlayfs; load it with `modprobe overlay`' };
    }
    if (!cgroups)
      return {
        available: false,
        reason: 'no usable cgroups: mount cgroup v2 at /sys/fs/cgroup, or the v1 memory, pids, cpu and freezer controllers',
      };
    if (!compileSeccompFilter())
      return { available: false, reason: `no seccomp profile for the ${process.arch} architecture; use x64 or arm64` };
    if (!existsSync('/dev/loop-control'))
      return {
        available: false,
        reason:
          'no loop devices (/dev/loop-control is missing); each sandbox gets a size-capped disk on one: load the module with `modprobe loop`',
      };
    if (!(await commandExists('mkfs.ext4')))
      return {
        available: false,
        reason: 'mkfs.ext4 is missing (each sandbox gets a size-capped disk); install it with `apt-get install e2fsprogs`',
      };
    const [init, boot] = await Promise.all([ensureInitBinary(), ensureBootBinary()]);
    if ('error' in init) return { available: false, reason: init.error };
    if ('error' in boot) return { available: false, reason: boot.error };
    binaries.init = init.path;
    binaries.boot = boot.path;
    return { available: true };
  };

  const getAvailability = (): Promise<Availability> => {
    if (!availability) availability = checkAvailability();
    return availability;
  };

  const init = async (): Promise<Runtime> => {
    const available = await getAvailability();
    if (!available.available) throw localError('unavailable', available.reason);
    const seccomp = compileSeccompFilter();
    if (!runtime || !seccomp) throw localError('unavailable', 'the local provider has no cgroups or no seccomp profile here');
    await ensureLayout(layout);
    const holder = Number((await readFile(layout.lock, 'utf8').catch(() => '')).trim());
    if (holder && holder !== process.pid && (await processStartTime(holder)) !== null) {
      throw localError(
        'unavailable',
        `another process (pid ${holder}) uses ${layout.root}; stop it or give this server its own data directory`,
      );
    }
    await writeFile(layout.lock, `${process.pid}\n`);
    await writeFile(layout.seccomp, seccomp);
    await disks.resume();
    const { live } = await runtime.instances.recover();
    await thawInterruptedForks(runtime.instances, runtime.cgroups, live);
    for (const point of await mountsUnder(layout.tmp)) await unmount(point);
    for (const name of await readdir(layout.tmp).catch(() => [])) await removeTree(join(layout.tmp, name));
    await store.collectLayers(live.flatMap((r) => r.layers));
    for (const record of await store.listRecords()) for (const id of record.layers) void images.scheduleDigest(id);
    return runtime;
  };

  /** The runtime, once the layout exists and crash leftovers are gone; refuses when the provider cannot run here. */
  const ensureReady = (): Promise<Runtime> => {
    ready ??= init().catch((error: unknown) => {
      ready = null;
      throw error;
    });
    return ready;
  };

  const images = createLocalImages(store, {
    ready: async () => void (await ensureReady()),
    liveInstances: async () => (await ensureReady()).instances.listKept(),
    tmpDir: layout.tmp,
  });

  const parseConfig = (config: unknown): LocalConfig => {
    const parsed = localConfigSchema.safeParse(config);
    if (!parsed.success) throw localError('invalid_config', `the local provider config is invalid: ${parsed.error.message}`);
    return parsed.data;
  };

  const imageFor = async (config: LocalConfig, template: TemplateRef | null | undefined): Promise<ImageRecord> => {
    if (template) {
      const image = await store.readImage(template.ref);
      if (!image)
        throw localError('not_found', `the custom image ${template.ref} no longer exists; capture a new one or boot from the base`);
      return image;
    }
    const image = await store.resolve(config.image);
    if (!image)
      throw localError('invalid_config', `no local image named "${config.image}"; import one with \`sandcast image import\` or use "host"`);
    return image;
  };

  const start = async (
    kind: InstanceRecord['kind'],
    params: { ownerId: string; environmentId: string; config: unknown; template: TemplateRef | null | undefined },
  ) => {
    const { instances } = await ensureReady();
    const config = parseConfig(params.config);
    const image = await imageFor(config, params.template);
    try {
      return await instances.start({
        id: newId(kind === 'setup' ? 'stp-' : 'sbx-'),
        kind,
        ownerId: params.ownerId,
        environmentId: params.environmentId,
        image,
        config,
        layersDir: layout.layers,
      });
    } catch (error) {
      throw localError('backend', `starting the sandbox failed: ${error instanceof Error ? error.message : String(error)}`, error);
    }
  };

  const liveRecord = async (instanceId: string): Promise<InstanceRecord> => {
    const { instances } = await ensureReady();
    const record = await instances.live(instanceId);
    // A stop in progress (or one whose processes are still dying) is not running: nothing is started in it.
    if (record && !record.stopped) return record;
    const stored = record ?? (await instances.load(instanceId));
    if (stored?.stopped) throw localError('not_running', `sandbox ${instanceId} is stopped; start it first`);
    // Say why when the record says so: the init died (its last words are in init.log).
    if (stored) throw localError('not_found', `sandbox ${instanceId} stopped: ${await instances.initGone(stored)}; create a new one`);
    throw localError('not_found', `sandbox ${instanceId} does not exist; create a new one`);
  };

  const inspect = async (instanceId: string): Promise<InstanceInfo> => {
    const { instances } = await ensureReady();
    const record = await instances.load(instanceId);
    if (!record) return { status: 'missing' };
    if (record.stopped) return { status: 'stopped', detail: 'stopped on request; its disk is kept' };
    if (await instances.isAlive(record)) return { status: 'running' };
    // The compute is gone for good (the conformance contract's `missing`; the server marks it lost).
    return { status: 'missing', detail: `${await instances.initGone(record)}; destroy it and create a new one` };
  };

  const plumbing = createExecPlumbing({ ready: ensureReady });
  const { runIn, startIn, streamFrom, stepFailed, closeAgents, forgetAgent } = plumbing;
  adoptAgent = plumbing.adoptAgent;

  const provider: LocalProvider = {
    id: PROVIDER_ID,
    displayName: 'Local (namespaces)',
    configSchema: localConfigSchema,
    capabilities: ON_HOST_PROVIDER_CAPABILITIES,
    runtimeKnobs: LOCAL_RUNTIME_KNOBS,
    images: images.api,
    baseImages: asBaseImageStore(images.api),

    availability: () => getAvailability(),

    async create(request: CreateSandboxRequest) {
      const record = await start('sandbox', {
        ownerId: request.sandboxId,
        environmentId: request.environmentId,
        config: request.config,
        template: request.template,
      });
      // A sandbox that reports running has its exec agent ready (its init forked it; ADR 0034).
      return { instanceId: record.id };
    },

    inspect,

    async exec(instanceId: string, request: ExecRequest): Promise<ExecResult> {
      const record = await liveRecord(instanceId);
      const result = await collectExecOutput(await startIn(record, request), { maxOutputBytes: request.maxOutputBytes });
      // The init died while the command started or ran: its output is the runtime's, not the command's.
      const { instances } = await ensureReady();
      if (result.exitCode !== 0 && (await instances.diedDuring(record, result.stderr)))
        throw localError('not_found', `sandbox ${instanceId} stopped: ${await instances.initGone(record)}; create a new one`);
      return result;
    },

    async execStream(instanceId: string, request: ExecRequest): Promise<ExecProcess> {
      return startIn(await liveRecord(instanceId), request);
    },

    async openPortStream(instanceId: string, port: number) {
      const record = await liveRecord(instanceId);
      return openNamespacedPortStream({ provider: PROVIDER_ID, netnsPath: `/proc/${record.initPid}/ns/net`, port });
    },

    async networkNamespace(instanceId: string) {
      return `/proc/${(await liveRecord(instanceId)).initPid}/ns/net`;
    },

    async openPty(instanceId: string, ptyOptions: PtyOptions): Promise<PtyStream> {
      const record = await liveRecord(instanceId);
      const { cgroups, instances } = await ensureReady();
      const group = `x${newId()}`;
      const procsFiles = await cgroups.createChild(record.id, group);
      const command = ptyOptions.command ?? ['/bin/sh', '-c', 'if [ -x /bin/bash ]; then exec /bin/bash -l; else exec /bin/sh -l; fi'];
      const env = { TERM: 'xterm-256color', ...ptyOptions.env };
      // The outer terminal's session lives outside the sandbox's pid namespace, where a shell cannot
      // hand the terminal back on exit; script(1) gives the command a terminal of its own inside.
      const quoted = command.map(shellQuote).join(' ');
      const wrapped = [
        '/bin/sh',
        '-c',
        'if command -v script >/dev/null 2>&1; then exec script -qec "$1" /dev/null; else exec /bin/sh -c "$1"; fi',
        'sh',
        quoted,
      ];
      const line = sandboxCommandLine(instances.spawnSpec(record, { command: wrapped, env, procsFiles, newSession: false }));
      return ptyStream({
        file: line.file,
        args: line.args,
        env: line.env,
        cols: ptyOptions.cols,
        rows: ptyOptions.rows,
        onClose: () => void cgroups.kill(record.id, group).then(() => cgroups.removeChild(record.id, group)),
      });
    },

    async readFile(instanceId: string, path: string): Promise<Buffer> {
      const record = await liveRecord(instanceId);
      const result = await runIn(record, { command: ['/bin/sh', '-c', '[ -f "$1" ] || exit 44; exec cat -- "$1"', 'sh', path] });
      if (result.exitCode === 44) throw localError('not_found', `no file at ${path} in sandbox ${instanceId}`);
      if (result.exitCode !== 0) throw await stepFailed(record, result.stderr, `reading ${path} failed`);
      return result.stdout;
    },

    async writeFile(instanceId: string, path: string, data: Buffer, writeOptions?: WriteFileOptions): Promise<void> {
      const record = await liveRecord(instanceId);
      const mode = (writeOptions?.mode ?? 0o644).toString(8);
      const script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1" && chmod "$2" "$1"';
      // An exec like any other (through the exec agent when it runs): nothing but its stderr is read.
      const command = ['/bin/sh', '-c', script, 'sh', path, mode];
      const result = await collectExecOutput(await startIn(record, { command, stdin: data }), { maxOutputBytes: WRITE_STDERR_BYTES });
      if (result.exitCode !== 0) throw await stepFailed(record, Buffer.from(result.stderr), `writing ${path} failed`);
    },

    // The overlay mounted at the instance's rootfs is what the sandbox sees as `/`.
    async workspaceHostPath(instanceId: string, path: string): Promise<string | null> {
      const record = await liveRecord(instanceId).catch((error: unknown) => {
        if (isProviderError(error) && error.code === 'not_running') return null;
        throw error;
      });
      if (!record) return null;
      return resolveDirInsideRoot(PROVIDER_ID, join((await ensureReady()).instances.dir(record.id), 'rootfs'), path);
    },

    async exportWorkspace(instanceId: string, path?: string): Promise<Readable> {
      const record = await liveRecord(instanceId);
      const dir = path ?? record.config.workdir;
      const check = await runIn(record, { command: ['/bin/sh', '-c', '[ -d "$1" ]', 'sh', dir] });
      if (check.exitCode !== 0) throw localError('not_found', `no directory ${dir} in sandbox ${instanceId}`);
      const { stdout, exit } = await streamFrom(record, ['tar', '-C', dir, '-cf', '-', '.'], null);
      void exit.then((result) => {
        if (result.exitCode !== 0)
          stdout.destroy(localError('backend', `tar in the sandbox failed: ${result.stderr.toString('utf8').trim()}`));
      });
      return stdout;
    },

    async importWorkspace(instanceId: string, tar: Readable, path?: string): Promise<void> {
      const record = await liveRecord(instanceId);
      const dir = path ?? record.config.workdir;
      const { stdout, exit } = await streamFrom(record, ['/bin/sh', '-c', 'mkdir -p -- "$1" && exec tar -C "$1" -xf -', 'sh', dir], tar);
      stdout.resume();
      const result = await exit;
      if (result.exitCode !== 0) throw await stepFailed(record, result.stderr, `unpacking into ${dir} failed`);
    },

    async destroy(instanceId: string): Promise<void> {
      const { instances: sandboxes } = await ensureReady();
      if (!/^(sbx|stp)-[0-9a-f]{16}$/.test(instanceId)) return;
      forgetAgent(instanceId);
      await sandboxes.teardown(instanceId);
    },

    async stop(instanceId: string): Promise<void> {
      const { instances } = await ensureReady();
      if (!(await instances.stop(instanceId))) throw localError('not_found', `sandbox ${instanceId} does not exist or its init is gone`);
    },

    async start(instanceId: string): Promise<void> {
      const { instances } = await ensureReady();
      let started: InstanceRecord | null;
      try {
        started = await instances.restart(instanceId, layout.layers);
      } catch (error) {
        throw localError(
          'backend',
          `starting sandbox ${instanceId} again failed: ${error instanceof Error ? error.message : String(error)}`,
          error,
        );
      }
      if (!started) throw localError('not_found', `sandbox ${instanceId} does not exist or its init is gone; create a new one`);
    },

    async fork(instanceId: string, targets: ForkTarget[]): Promise<CreatedSandbox[]> {
      const record = await liveRecord(instanceId);
      if (record.kind !== 'sandbox') throw localError('not_found', `${instanceId} is not a sandbox`);
      const { cgroups, instances } = await ensureReady();
      return forkInstance({ store, instances, cgroups, record, targets, maxLayers, layersDir: layout.layers });
    },

    async listInstances(): Promise<ManagedInstance[]> {
      const { instances: sandboxes } = await ensureReady();
      const records = await Promise.all((await sandboxes.ids()).map((id) => sandboxes.load(id)));
      return records
        .filter((r): r is InstanceRecord => r !== null)
        .map((r) => ({ instanceId: r.id, ownerId: r.ownerId, ownerKind: r.kind }));
    },

    async startInteractiveSetup(request: StartSetupRequest): Promise<SetupLease> {
      const record = await start('setup', {
        ownerId: request.setupSessionId,
        environmentId: request.environmentId,
        config: request.config,
        template: request.source,
      });
      return { leaseId: record.id, connection: { type: 'pty' } };
    },

    getInteractiveSetup: inspect,

    async captureTemplate(request: CaptureRequest): Promise<TemplateRef> {
      const record = await liveRecord(request.leaseId);
      const { instances } = await ensureReady();
      if (record.kind !== 'setup') throw localError('not_found', `${request.leaseId} is not a setup sandbox`);
      return captureLease({
        store,
        instances,
        record,
        maxLayers,
        onProgress: request.onProgress,
        afterCapture: (layerId) => void images.scheduleDigest(layerId),
        inBackground: (work) => {
          background.add(work);
          void work.finally(() => background.delete(work));
        },
      });
    },

    async cancelInteractiveSetup(leaseId: string): Promise<void> {
      await provider.destroy(leaseId);
    },

    async deleteTemplate(template: TemplateRef): Promise<void> {
      await images.removeTemplate(template.ref);
    },

    async listChanges(leaseId: string): Promise<FileChange[]> {
      const { instances: sandboxes } = await ensureReady();
      const record = await sandboxes.load(leaseId);
      if (!record) throw localError('not_found', `setup ${leaseId} does not exist`);
      const top = [...record.layers].reverse().map((id) => store.layerDir(id));
      return listUpperChanges({
        uppers: sandboxes.upperDirs(record),
        lowersFor: (sandboxPath) => (sandboxPath === '/' ? top : [...top.map((dir) => join(dir, sandboxPath)), sandboxPath]),
      });
    },

    async close(): Promise<void> {
      closeAgents();
      await Promise.all(background);
      await images.stopDigests();
      const holder = (await readFile(layout.lock, 'utf8').catch(() => '')).trim();
      if (holder === String(process.pid)) await writeFile(layout.lock, '');
      // The disk pool stays while a sandbox runs on it (it outlives the server); a later use mounts it again.
      await disks.release();
      await cgroups?.removeRootIfEmpty();
      stopSpawnerWhenIdle();
    },
  };
  return provider;
}
