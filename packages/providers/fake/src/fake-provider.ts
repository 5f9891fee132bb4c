import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  type CreatedSandbox,
  collectExecOutput,
  type ExecProcess,
  type ExecRequest,
  type ExecResult,
  type ForkTarget,
  type InstanceInfo,
  type ManagedInstance,
  ON_HOST_PROVIDER_CAPABILITIES,
  type ProviderCapabilities,
  type ProviderContext,
  ProviderError,
  type PtyStream,
  type SandboxProvider,
  type TemplateRef,
} from '@sandcast/provider-sdk';
import { diffTrees } from './changes.ts';
import { type FakeConfig, fakeConfigSchema } from './config.ts';
import { killGroup, startProcess } from './exec.ts';
import { hostPath } from './paths.ts';
import { spawnPty } from './pty.ts';

interface InstanceMeta {
  ownerId: string;
  ownerKind: 'sandbox' | 'setup';
  environmentId: string;
  /** Template directory the instance started from, for change tracking. */
  source: string | null;
  config: FakeConfig;
}

export interface FakeProviderOptions extends ProviderContext {
  /** Registers the provider under another id (to run several fakes side by side). */
  id?: string | undefined;
  displayName?: string | undefined;
  /** Overrides capability flags, to exercise the server's refusals. */
  capabilities?: Partial<ProviderCapabilities> | undefined;
}

/** As the on-host providers, but a capture is a directory copy (a snapshot). */
export const FAKE_CAPABILITIES: ProviderCapabilities = {
  ...ON_HOST_PROVIDER_CAPABILITIES,
  templateRefKind: 'snapshot',
  egressProxy: false,
  // Its commands run on the host with host paths: a gateway installed there would be the host's.
  bridgeGateway: false,
};

export interface FakeProvider extends SandboxProvider {
  /** Deletes an instance behind the provider's back, as a lost machine would. */
  vanish(instanceId: string): Promise<void>;
  /** Test hook: the backend reports the instance broken (as a provider does after stopping it), with `reason`. */
  breakInstance(instanceId: string, reason: string): void;
}

/**
 * A provider for tests: each sandbox is a temp directory (its root, with `/workspace` inside)
 * and commands are real child processes of this host with that directory as working dir. It
 * isolates nothing. Capture copies the directory. Failure injection comes from the config's
 * `simulate` block.
 */
export function createFakeProvider(options: FakeProviderOptions): FakeProvider {
  const id = options.id ?? 'fake';
  const root = path.join(options.dataDir, 'providers', id);
  const instancesDir = path.join(root, 'instances');
  const templatesDir = path.join(root, 'templates');
  const capabilities: ProviderCapabilities = { ...FAKE_CAPABILITIES, ...options.capabilities };
  const running = new Map<string, Map<number, Promise<void>>>();
  const brokenInstances = new Map<string, string>();

  const error = (code: ProviderError['code'], message: string) => new ProviderError({ provider: id, code, message });
  const instanceDir = (instanceId: string) => {
    if (!/^[a-z0-9-]+$/.test(instanceId)) throw error('not_found', `no fake instance ${instanceId}`);
    return path.join(instancesDir, instanceId);
  };
  const fsRoot = (instanceId: string) => path.join(instanceDir(instanceId), 'fs');
  /** Present while the instance is stopped: its directory stays, its processes are gone. */
  const stoppedMarker = (instanceId: string) => path.join(instanceDir(instanceId), 'stopped');

  const readMeta = async (instanceId: string): Promise<InstanceMeta> => {
    try {
      return JSON.parse(await readFile(path.join(instanceDir(instanceId), 'meta.json'), 'utf8')) as InstanceMeta;
    } catch {
      throw error('not_found', `fake instance ${instanceId} does not exist (destroyed or lost)`);
    }
  };

  /** The instance's metadata, refusing a stopped one as `not_running` (start it first). */
  const runningMeta = async (instanceId: string): Promise<InstanceMeta> => {
    const meta = await readMeta(instanceId);
    if (await exists(stoppedMarker(instanceId))) throw error('not_running', `fake instance ${instanceId} is stopped; start it first`);
    return meta;
  };

  const templateDir = (template: TemplateRef) => {
    const match = /^fake-template:([a-z0-9-]+)$/.exec(template.ref);
    if (!match?.[1]) throw error('not_found', `not a fake template ref: ${template.ref}`);
    return path.join(templatesDir, match[1]);
  };

  const requireCapability = (flag: keyof ProviderCapabilities, what: string) => {
    if (!capabilities[flag]) throw error('unsupported', `the ${id} provider does not offer ${what}`);
  };

  const spawnInstance = async (
    ownerKind: InstanceMeta['ownerKind'],
    ownerId: string,
    environmentId: string,
    rawConfig: unknown,
    template: TemplateRef | null,
  ) => {
    const config = fakeConfigSchema.parse(rawConfig);
    if (config.simulate?.failCreate) throw error('backend', config.simulate.failCreate);
    const instanceId = `fake-${randomUUID()}`;
    const dir = instanceDir(instanceId);
    let source: string | null = null;
    if (template) {
      source = templateDir(template);
      if (!(await exists(source))) throw error('not_found', `template ${template.ref} no longer exists; capture a new image`);
      await mkdir(dir, { recursive: true });
      await cp(source, path.join(dir, 'fs'), { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    } else {
      await mkdir(path.join(dir, 'fs', 'workspace'), { recursive: true });
    }
    const meta: InstanceMeta = { ownerId, ownerKind, environmentId, source, config };
    await writeFile(path.join(dir, 'meta.json'), JSON.stringify(meta));
    return instanceId;
  };

  const killAll = async (instanceId: string) => {
    const processes = running.get(instanceId);
    running.delete(instanceId);
    if (!processes) return;
    for (const pid of processes.keys()) killGroup(pid);
    await Promise.all(processes.values());
  };

  const destroyInstance = async (instanceId: string) => {
    await killAll(instanceId);
    await rm(instanceDir(instanceId), { recursive: true, force: true });
  };

  const baseEnv = (instanceId: string, extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: path.join(fsRoot(instanceId), 'workspace'),
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    SANDCAST_SANDBOX_ROOT: fsRoot(instanceId),
    ...extra,
  });

  const startExec = async (instanceId: string, request: ExecRequest): Promise<ExecProcess> => {
    await runningMeta(instanceId);
    const cwd = hostPath(fsRoot(instanceId), request.cwd ?? '/workspace');
    const processes = running.get(instanceId) ?? new Map<number, Promise<void>>();
    running.set(instanceId, processes);
    return startProcess({
      command: request.command,
      cwd,
      env: baseEnv(instanceId, request.env),
      stdin: request.stdin,
      stdinStream: request.stdinStream,
      timeoutMs: request.timeoutMs,
      track: (pid, done) => {
        processes.set(pid, done);
        void done.then(() => processes.delete(pid));
      },
    });
  };

  return {
    id,
    displayName: options.displayName ?? 'Fake (tests)',
    configSchema: fakeConfigSchema,
    capabilities,
    runtimeKnobs: ['cpu', 'memoryMb'],

    availability: async () => ({ available: true }),

    create: async (request) => ({
      instanceId: await spawnInstance('sandbox', request.sandboxId, request.environmentId, request.config, request.template ?? null),
    }),

    inspect: async (instanceId): Promise<InstanceInfo> => {
      const broken = brokenInstances.get(instanceId);
      if (broken) return { status: 'failed', detail: broken };
      try {
        await readMeta(instanceId);
      } catch {
        return { status: 'missing' };
      }
      return (await exists(stoppedMarker(instanceId))) ? { status: 'stopped' } : { status: 'running' };
    },

    stop: async (instanceId) => {
      requireCapability('stopStart', 'stop and start');
      await readMeta(instanceId);
      await killAll(instanceId);
      await writeFile(stoppedMarker(instanceId), '');
    },

    start: async (instanceId) => {
      requireCapability('stopStart', 'stop and start');
      await readMeta(instanceId);
      await rm(stoppedMarker(instanceId), { force: true });
    },

    // Tests only: the fake has no namespace of its own, so its "sandbox loopback" is the host's.
    openPortStream: async (instanceId, port) => {
      await runningMeta(instanceId);
      const socket = net.connect({ host: '127.0.0.1', port });
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', () => reject(error('not_found', `nothing listens on port ${port} inside the sandbox`)));
      });
      return socket;
    },

    exec: async (instanceId, request): Promise<ExecResult> =>
      collectExecOutput(await startExec(instanceId, request), { maxOutputBytes: request.maxOutputBytes }),

    execStream: (instanceId, request) => startExec(instanceId, request),

    openPty: async (instanceId, ptyOptions): Promise<PtyStream> => {
      requireCapability('pty', 'terminals');
      await runningMeta(instanceId);
      return spawnPty({
        command: ptyOptions.command ?? ['sh', '-i'],
        cwd: path.join(fsRoot(instanceId), 'workspace'),
        env: baseEnv(instanceId, ptyOptions.env),
        cols: ptyOptions.cols,
        rows: ptyOptions.rows,
      });
    },

    readFile: async (instanceId, filePath) => {
      await runningMeta(instanceId);
      try {
        return await readFile(hostPath(fsRoot(instanceId), filePath));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw error('not_found', `no file ${filePath} in the sandbox`);
        throw e;
      }
    },

    writeFile: async (instanceId, filePath, data, writeOptions) => {
      await runningMeta(instanceId);
      const target = hostPath(fsRoot(instanceId), filePath);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, data, { mode: writeOptions?.mode ?? 0o644 });
    },

    exportWorkspace: async (instanceId, dir = '/workspace') => {
      await runningMeta(instanceId);
      const child = spawn('tar', ['-C', hostPath(fsRoot(instanceId), dir), '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'ignore'] });
      return child.stdout;
    },

    importWorkspace: async (instanceId, tar: Readable, dir = '/workspace') => {
      await runningMeta(instanceId);
      const target = hostPath(fsRoot(instanceId), dir);
      await mkdir(target, { recursive: true });
      const child = spawn('tar', ['-C', target, '-xf', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      await pipeline(tar, child.stdin);
      const code = await exited;
      if (code !== 0) throw error('backend', `tar could not unpack the workspace archive (exit ${code})`);
    },

    destroy: destroyInstance,

    /** Copies the source's directory once per fork (processes are not copied); all or nothing. */
    fork: async (instanceId: string, targets: ForkTarget[]): Promise<CreatedSandbox[]> => {
      requireCapability('fork', 'fork');
      const meta = await runningMeta(instanceId);
      const made: string[] = [];
      try {
        for (const target of targets) {
          if (made.length === meta.config.simulate?.failForkAfter) throw error('backend', `simulated failure of fork ${made.length + 1}`);
          const forkId = `fake-${randomUUID()}`;
          await mkdir(instanceDir(forkId), { recursive: true });
          await cp(fsRoot(instanceId), fsRoot(forkId), { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
          made.push(forkId);
          const forkMeta: InstanceMeta = { ...meta, ownerId: target.sandboxId, ownerKind: 'sandbox' };
          await writeFile(path.join(instanceDir(forkId), 'meta.json'), JSON.stringify(forkMeta));
        }
      } catch (cause) {
        for (const forkId of made) await destroyInstance(forkId);
        throw cause;
      }
      return made.map((forkId) => ({ instanceId: forkId }));
    },

    listInstances: async (): Promise<ManagedInstance[]> => {
      const names = await readdir(instancesDir).catch(() => [] as string[]);
      const listed: ManagedInstance[] = [];
      for (const instanceId of names) {
        const meta = await readMeta(instanceId).catch(() => null);
        if (meta) listed.push({ instanceId, ownerId: meta.ownerId, ownerKind: meta.ownerKind });
      }
      return listed;
    },

    startInteractiveSetup: async (request) => {
      requireCapability('interactiveSetup', 'interactive setup');
      const leaseId = await spawnInstance('setup', request.setupSessionId, request.environmentId, request.config, request.source);
      return { leaseId, connection: { type: 'pty' } };
    },

    getInteractiveSetup: async (leaseId) => {
      const meta = await readMeta(leaseId).catch(() => null);
      return meta?.ownerKind === 'setup' ? { status: 'running' } : { status: 'missing' };
    },

    captureTemplate: async (request): Promise<TemplateRef> => {
      requireCapability('templateCapture', 'image capture');
      const meta = await readMeta(request.leaseId);
      if (meta.config.simulate?.captureDelayMs) await new Promise((r) => setTimeout(r, meta.config.simulate?.captureDelayMs));
      if (meta.config.simulate?.failCapture) throw error('capture_failed', meta.config.simulate.failCapture);
      request.onProgress?.({ phase: 'copying', fraction: 0 });
      const templateId = randomUUID();
      const target = path.join(templatesDir, templateId);
      await mkdir(templatesDir, { recursive: true });
      await cp(fsRoot(request.leaseId), target, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      request.onProgress?.({ phase: 'done', fraction: 1 });
      return { kind: capabilities.templateRefKind ?? 'snapshot', ref: `fake-template:${templateId}`, sizeBytes: await treeSize(target) };
    },

    cancelInteractiveSetup: async (leaseId) => {
      requireCapability('interactiveSetup', 'interactive setup');
      await destroyInstance(leaseId);
    },

    deleteTemplate: async (template) => {
      requireCapability('templateDelete', 'template deletion');
      await rm(templateDir(template), { recursive: true, force: true });
    },

    listChanges: async (leaseId) => {
      requireCapability('changeTracking', 'change tracking');
      const meta = await readMeta(leaseId);
      return diffTrees(meta.source, fsRoot(leaseId));
    },

    breakInstance: (instanceId, reason) => {
      brokenInstances.set(instanceId, reason);
    },

    vanish: async (instanceId) => {
      await killAll(instanceId);
      await rm(instanceDir(instanceId), { recursive: true, force: true });
    },

    close: async () => {
      for (const instanceId of [...running.keys()]) await killAll(instanceId);
    },
  };
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

async function treeSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}
