import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Daytona, Sandbox } from '@daytonaio/sdk';
import {
  type CreateSandboxRequest,
  collectExecOutput,
  type InstanceInfo,
  type InstanceStatus,
  type ManagedInstance,
  type ProviderCapabilities,
  ProviderError,
  type SandboxProvider,
  type TemplateRef,
} from '@sandcast/provider-sdk';
import { daytonaClient, isNotFound, PROVIDER_ID, reasonOf, shellQuote, toProviderError } from './client.ts';
import { DAYTONA_RUNTIME_KNOBS, type DaytonaConfig, type DaytonaConnectionSettings, daytonaConfigSchema } from './config.ts';
import { execInSandbox, runShell, WORKDIR } from './exec.ts';
import { sshConnectionOf } from './ssh-access.ts';

/** What Daytona offers through Sandcast: setup over Daytona's SSH access, capture into a snapshot. */
export const DAYTONA_CAPABILITIES: Readonly<ProviderCapabilities> = Object.freeze<ProviderCapabilities>({
  pty: false,
  interactiveSetup: true,
  interactiveSetupConnectionTypes: ['ssh'],
  templateCapture: true,
  templateRefKind: 'snapshot',
  templateDelete: true,
  changeTracking: false,
  duplexCommandStream: false,
  checkpoint: false,
  portForward: false,
  stopStart: true,
  durabilities: ['none'],
  archiveInsteadOfDelete: true,
  bridgeGateway: true,
});

/** Labels on every sandbox Sandcast creates, for garbage collection. */
export const DAYTONA_LABELS = {
  managed: 'sandcast.managed',
  ownerId: 'sandcast.owner-id',
  ownerKind: 'sandcast.owner-kind',
  environmentId: 'sandcast.environment-id',
} as const;

/** Prefix of the snapshots a capture makes. */
const SNAPSHOT_PREFIX = 'sandcast-';
const CREATE_TIMEOUT_S = 180;

function statusOfState(state: string | undefined): InstanceStatus {
  switch (state) {
    case 'started':
      return 'running';
    case 'stopped':
    case 'stopping':
    case 'archived':
    case 'archiving':
      return 'stopped';
    case 'paused':
    case 'pausing':
      return 'paused';
    case 'error':
    case 'build_failed':
      return 'failed';
    case 'destroyed':
    case 'destroying':
      return 'missing';
    default:
      return 'starting';
  }
}

const unsupported = (what: string) =>
  new ProviderError({ provider: PROVIDER_ID, code: 'unsupported', message: `the Daytona provider does not offer ${what}` });

/** A Sandcast provider bound to one Daytona account (one connection). */
export function createDaytonaProvider(settings: DaytonaConnectionSettings): SandboxProvider {
  let client: Daytona | null = null;
  const daytona = () => {
    client ??= daytonaClient(settings);
    return client;
  };
  const fail = (what: string) => (error: unknown) => {
    throw toProviderError(error, what, settings.apiUrl);
  };

  const sandboxOf = (instanceId: string): Promise<Sandbox> =>
    daytona()
      .get(instanceId)
      .then(
        (sandbox) => {
          if (sandbox.state === 'destroyed' || sandbox.state === 'destroying') {
            throw new ProviderError({ provider: PROVIDER_ID, code: 'not_found', message: `Daytona sandbox ${instanceId} was deleted` });
          }
          return sandbox;
        },
        fail(`sandbox ${instanceId}`),
      );

  const running = async (instanceId: string): Promise<Sandbox> => {
    const sandbox = await sandboxOf(instanceId);
    if (sandbox.state !== 'started') {
      throw new ProviderError({
        provider: PROVIDER_ID,
        code: 'not_running',
        message: `Daytona sandbox ${instanceId} is ${sandbox.state}; start it again first`,
      });
    }
    return sandbox;
  };

  const boot = async (config: DaytonaConfig, labels: Record<string, string>, template: TemplateRef | null | undefined): Promise<string> => {
    const snapshot = template?.ref ?? config.snapshot;
    const resources =
      config.cpu || config.memoryGb || config.diskGb ? { cpu: config.cpu, memory: config.memoryGb, disk: config.diskGb } : undefined;
    const sandbox = await daytona()
      .create(
        {
          ...(snapshot ? { snapshot } : {}),
          ...(resources ? { resources } : {}),
          labels: { [DAYTONA_LABELS.managed]: 'true', ...labels },
          envVars: config.env,
          autoStopInterval: config.autoStopMinutes,
          autoArchiveInterval: config.autoArchiveMinutes,
          autoDeleteInterval: config.autoDeleteMinutes,
        },
        { timeout: CREATE_TIMEOUT_S },
      )
      .catch((error: unknown) => {
        if (template && isNotFound(error)) {
          throw new ProviderError({
            provider: PROVIDER_ID,
            code: 'not_found',
            message: `the captured Daytona snapshot ${template.ref} no longer exists`,
          });
        }
        throw toProviderError(error, 'creating a Daytona sandbox', settings.apiUrl);
      });
    // The workdir every Sandcast command starts in; images running as a user make it through sudo.
    const made = await runShell(
      sandbox,
      `mkdir -p ${WORKDIR} 2>/dev/null || { sudo mkdir -p ${WORKDIR} && sudo chown "$(id -u):$(id -g)" ${WORKDIR}; }`,
    ).catch(fail('preparing the workdir'));
    if (made.exitCode !== 0) {
      await sandbox.delete().catch(() => undefined);
      throw new ProviderError({
        provider: PROVIDER_ID,
        code: 'invalid_config',
        message: `the sandbox cannot make ${WORKDIR} (${made.output.trim()}); use a snapshot whose user may create it`,
      });
    }
    return sandbox.id;
  };

  const parse = (config: unknown): DaytonaConfig => daytonaConfigSchema.parse(config);

  const destroy = async (instanceId: string) => {
    const sandbox = await daytona()
      .get(instanceId)
      .catch((error: unknown) => {
        if (isNotFound(error)) return null;
        throw toProviderError(error, `deleting sandbox ${instanceId}`, settings.apiUrl);
      });
    if (!sandbox || sandbox.state === 'destroyed') return;
    await sandbox.delete().catch((error: unknown) => {
      if (!isNotFound(error)) throw toProviderError(error, `deleting sandbox ${instanceId}`, settings.apiUrl);
    });
  };

  const inspect = async (instanceId: string): Promise<InstanceInfo> => {
    try {
      const sandbox = await daytona().get(instanceId);
      const status = statusOfState(sandbox.state);
      return status === 'failed' ? { status, detail: sandbox.errorReason ?? `Daytona reports ${sandbox.state}` } : { status };
    } catch (error) {
      if (isNotFound(error)) return { status: 'missing' };
      throw toProviderError(error, `inspecting sandbox ${instanceId}`, settings.apiUrl);
    }
  };

  const provider: SandboxProvider = {
    id: PROVIDER_ID,
    displayName: 'Daytona',
    configSchema: daytonaConfigSchema,
    capabilities: DAYTONA_CAPABILITIES,
    runtimeKnobs: DAYTONA_RUNTIME_KNOBS,

    async availability() {
      try {
        await daytona().list({ limit: 1 }).next();
        return { available: true };
      } catch (error) {
        return { available: false, reason: reasonOf(error, settings.apiUrl) };
      }
    },

    async create(request: CreateSandboxRequest) {
      const config = parse(request.config);
      const labels = {
        [DAYTONA_LABELS.ownerId]: request.sandboxId,
        [DAYTONA_LABELS.ownerKind]: 'sandbox',
        [DAYTONA_LABELS.environmentId]: request.environmentId,
      };
      return { instanceId: await boot(config, labels, request.template) };
    },

    inspect,

    async exec(instanceId, request) {
      const process = await execInSandbox(await running(instanceId), request).catch(fail(`running a command in ${instanceId}`));
      return collectExecOutput(process, { maxOutputBytes: request.maxOutputBytes });
    },

    async execStream(instanceId, request) {
      return execInSandbox(await running(instanceId), request).catch(fail(`running a command in ${instanceId}`));
    },

    openPty: async () => {
      throw unsupported('a native terminal; setup sessions connect over Daytona SSH access');
    },

    async readFile(instanceId, path) {
      const sandbox = await running(instanceId);
      try {
        return await sandbox.fs.downloadFile(path);
      } catch (error) {
        if (isNotFound(error) || /not found|no such file/i.test((error as Error).message)) {
          throw new ProviderError({ provider: PROVIDER_ID, code: 'not_found', message: `no file ${path} in sandbox ${instanceId}` });
        }
        throw toProviderError(error, `reading ${path}`, settings.apiUrl);
      }
    },

    async writeFile(instanceId, path, data, options) {
      const sandbox = await running(instanceId);
      await sandbox.fs.uploadFile(data, path).catch(fail(`writing ${path}`));
      if (options?.mode !== undefined) await runShell(sandbox, `chmod ${options.mode.toString(8)} ${shellQuote(path)}`);
    },

    async exportWorkspace(instanceId, path = WORKDIR) {
      const sandbox = await running(instanceId);
      const file = `/tmp/sandcast-export-${randomBytes(6).toString('hex')}.tar`;
      const packed = await runShell(sandbox, `tar -C ${shellQuote(path)} -cf ${file} .`);
      if (packed.exitCode !== 0) {
        throw new ProviderError({ provider: PROVIDER_ID, code: 'not_found', message: `cannot pack ${path}: ${packed.output.trim()}` });
      }
      const tar = await sandbox.fs.downloadFile(file).catch(fail(`exporting ${path}`));
      await runShell(sandbox, `rm -f ${file}`).catch(() => undefined);
      return Readable.from([tar]);
    },

    async importWorkspace(instanceId, tar, path = WORKDIR) {
      const sandbox = await running(instanceId);
      const chunks: Buffer[] = [];
      for await (const chunk of tar) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      const file = `/tmp/sandcast-import-${randomBytes(6).toString('hex')}.tar`;
      await sandbox.fs.uploadFile(Buffer.concat(chunks), file).catch(fail(`importing into ${path}`));
      const unpacked = await runShell(
        sandbox,
        `mkdir -p ${shellQuote(path)} && tar -C ${shellQuote(path)} -xf ${file}; s=$?; rm -f ${file}; exit $s`,
      );
      if (unpacked.exitCode !== 0) {
        throw new ProviderError({
          provider: PROVIDER_ID,
          code: 'invalid_input',
          message: `the tar stream did not unpack: ${unpacked.output.trim()}`,
        });
      }
    },

    destroy,

    async stop(instanceId) {
      const sandbox = await sandboxOf(instanceId);
      if (sandbox.state === 'stopped' || sandbox.state === 'archived') return;
      await sandbox.stop(CREATE_TIMEOUT_S).catch(fail(`stopping ${instanceId}`));
    },

    async start(instanceId) {
      const sandbox = await sandboxOf(instanceId);
      if (sandbox.state === 'started') return;
      await sandbox.start(CREATE_TIMEOUT_S).catch(fail(`starting ${instanceId}`));
    },

    async archive(instanceId) {
      const sandbox = await sandboxOf(instanceId);
      if (sandbox.state === 'archived') return;
      if (sandbox.state !== 'stopped') await sandbox.stop(CREATE_TIMEOUT_S).catch(fail(`stopping ${instanceId}`));
      await sandbox.archive().catch(fail(`archiving ${instanceId}`));
    },

    async listInstances() {
      const found: ManagedInstance[] = [];
      try {
        for await (const sandbox of daytona().list({ labels: { [DAYTONA_LABELS.managed]: 'true' } })) {
          if (sandbox.state === 'destroyed' || sandbox.state === 'destroying') continue;
          const ownerKind = sandbox.labels[DAYTONA_LABELS.ownerKind];
          const ownerId = sandbox.labels[DAYTONA_LABELS.ownerId];
          if (!ownerId || (ownerKind !== 'sandbox' && ownerKind !== 'setup')) continue;
          found.push({ instanceId: sandbox.id, ownerId, ownerKind });
        }
      } catch (error) {
        throw toProviderError(error, 'listing sandboxes', settings.apiUrl);
      }
      return found;
    },

    async startInteractiveSetup(request) {
      const config = parse(request.config);
      const labels = {
        [DAYTONA_LABELS.ownerId]: request.setupSessionId,
        [DAYTONA_LABELS.ownerKind]: 'setup',
        [DAYTONA_LABELS.environmentId]: request.environmentId,
      };
      const leaseId = await boot({ ...config, autoStopMinutes: 0 }, labels, request.source);
      const sandbox = await sandboxOf(leaseId);
      const minutes = Math.max(1, Math.ceil(request.ttlSeconds / 60));
      const access = await sandbox.createSshAccess(minutes).catch(async (error: unknown) => {
        await destroy(leaseId).catch(() => undefined);
        throw toProviderError(error, 'opening SSH access', settings.apiUrl);
      });
      return { leaseId, connection: sshConnectionOf(access) };
    },

    getInteractiveSetup: inspect,

    async captureTemplate(request) {
      const sandbox = await running(request.leaseId).catch((error: unknown) => {
        throw new ProviderError({ provider: PROVIDER_ID, code: 'capture_failed', message: (error as Error).message });
      });
      const name = `${SNAPSHOT_PREFIX}${request.setupSessionId}-${randomBytes(4).toString('hex')}`.slice(0, 200);
      request.onProgress?.({ phase: 'snapshotting' });
      try {
        await sandbox.createSnapshot(name, CREATE_TIMEOUT_S);
        const snapshot = await daytona().snapshot.get(name);
        return { kind: 'snapshot', ref: name, metadata: { snapshotId: snapshot.id, sourceSandboxId: sandbox.id } };
      } catch (error) {
        throw new ProviderError({
          provider: PROVIDER_ID,
          code: 'capture_failed',
          message: `Daytona could not snapshot the setup sandbox: ${reasonOf(error, settings.apiUrl)}`,
        });
      }
    },

    cancelInteractiveSetup: destroy,

    async deleteTemplate(template) {
      const snapshot = await daytona()
        .snapshot.get(template.ref)
        .catch((error: unknown) => {
          if (isNotFound(error)) return null;
          throw toProviderError(error, `deleting snapshot ${template.ref}`, settings.apiUrl);
        });
      if (!snapshot) return;
      await daytona()
        .snapshot.delete(snapshot)
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw toProviderError(error, `deleting snapshot ${template.ref}`, settings.apiUrl);
        });
    },

    listChanges: async () => {
      throw unsupported('change tracking');
    },

    async close() {
      const open = client;
      client = null;
      await open?.[Symbol.asyncDispose]().catch(() => undefined);
    },
  };
  return provider;
}
