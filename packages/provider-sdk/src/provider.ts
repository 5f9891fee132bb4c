import type { Duplex, Readable } from 'node:stream';
import type { z } from 'zod';
import type { BaseImageStore } from './base-images.ts';
import type { ProviderCapabilities, TemplateKind } from './capabilities.ts';
import type { CollectedExec, ExecProcess } from './exec-output.ts';

/** Environment config after the provider's schema parsed it, secrets decrypted. */
export type ProviderConfig = Record<string, unknown>;

export type Availability = { available: true } | { available: false; reason: string };

/** A captured custom image as the provider knows it. */
export interface TemplateRef {
  kind: TemplateKind;
  /** Stable provider reference: an image name, a snapshot id, a layer chain id. */
  ref: string;
  digest?: string | undefined;
  sizeBytes?: number | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface CreateSandboxRequest {
  /** Sandcast's id for the sandbox; providers label their resources with it. */
  sandboxId: string;
  environmentId: string;
  config: ProviderConfig;
  /** Boot from this captured image instead of the config's base. */
  template?: TemplateRef | null | undefined;
}

export interface CreatedSandbox {
  /** The provider's id for the compute; every later call names it. */
  instanceId: string;
}

/** One sandbox a fork makes: Sandcast's id for it (providers label their resources with it). */
export interface ForkTarget {
  sandboxId: string;
}

export type InstanceStatus = 'starting' | 'running' | 'paused' | 'stopped' | 'failed' | 'missing';

export interface InstanceInfo {
  status: InstanceStatus;
  detail?: string | undefined;
}

export interface ExecRequest {
  command: string[];
  /** Absolute path inside the sandbox; default: the sandbox's workdir (`/workspace`). */
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
  /** Default 60 000 ms. On timeout the whole process tree is killed. */
  timeoutMs?: number | undefined;
  stdin?: string | Buffer | undefined;
  /**
   * `execStream` only, on providers with the `duplexCommandStream` capability: copied to the
   * command's stdin as it arrives, with backpressure; its end closes stdin. Takes the place of
   * `stdin` (the two are not combined). The host bridge's duplex channel runs over it.
   */
  stdinStream?: Readable | undefined;
  /**
   * `exec` only: the most output kept per stream, default `DEFAULT_EXEC_OUTPUT_MAX_BYTES` (4 MiB).
   * The rest is read and dropped (the command is never blocked by the cap) and counted.
   */
  maxOutputBytes?: number | undefined;
}

/** A finished command: its exit, its output up to the cap, and what the cap dropped. */
export type ExecResult = CollectedExec;

export interface PtyOptions {
  cols: number;
  rows: number;
  /** Default: a login shell. */
  command?: string[] | undefined;
  env?: Record<string, string> | undefined;
}

export interface Disposable {
  dispose(): void;
}

/** A live terminal inside a sandbox. Output arrives as bytes; `pause` stops reading the source. */
export interface PtyStream {
  write(data: string | Buffer): void;
  resize(cols: number, rows: number): void;
  onData(listener: (chunk: Buffer) => void): Disposable;
  onExit(listener: (exit: { exitCode: number | null; signal?: string | undefined }) => void): Disposable;
  pause(): void;
  resume(): void;
  close(): void;
}

export interface WriteFileOptions {
  /** Unix mode, default 0o644. */
  mode?: number | undefined;
}

export interface StartSetupRequest {
  setupSessionId: string;
  environmentId: string;
  config: ProviderConfig;
  /** Seed the setup from this image (a Refresh); null starts from the config's base. */
  source: TemplateRef | null;
  ttlSeconds: number;
}

export type SetupConnection =
  | { type: 'pty' }
  | { type: 'ssh'; command: string; host: string; port: number; username: string; expiresAt?: string | undefined };

export interface SetupLease {
  /** Identifies the setup; it is also an instance id, so exec/openPty/files work on it. */
  leaseId: string;
  connection: SetupConnection;
}

export interface CaptureRequest {
  leaseId: string;
  setupSessionId: string;
  environmentId: string;
  /** Called with progress for long captures. */
  onProgress?: ((progress: { phase: string; fraction?: number | undefined }) => void) | undefined;
}

export type ChangeKind = 'added' | 'modified' | 'deleted';

export interface FileChange {
  /** Absolute path inside the sandbox. */
  path: string;
  kind: ChangeKind;
  sizeBytes: number | null;
  type: 'file' | 'directory' | 'symlink' | 'other';
}

/** A provider resource Sandcast created, found when listing for garbage collection. */
export interface ManagedInstance {
  instanceId: string;
  /** The Sandcast sandbox or setup session id it was created for. */
  ownerId: string;
  ownerKind: 'sandbox' | 'setup';
}

/**
 * A template artefact a capture made, found when listing for garbage collection. The server
 * removes it (deleteTemplate) once its setup session is over and no custom image refers to it:
 * what is left when a server dies between the provider's capture and the promotion's record.
 */
export interface CapturedTemplate {
  /** What deleteTemplate removes. */
  template: TemplateRef;
  /** Every reference a custom image may hold for it (names and digest). */
  refs: string[];
  /** The setup session whose capture made it. */
  setupSessionId: string;
}

/**
 * The contract every sandbox backend implements (ARCHITECTURE §5). Operations whose capability
 * flag is false throw `ProviderError` with code `unsupported`.
 */
export interface SandboxProvider {
  readonly id: string;
  readonly displayName: string;
  readonly configSchema: z.ZodType<ProviderConfig>;
  readonly capabilities: ProviderCapabilities;
  /**
   * Top-level config fields that only tune the runtime (cpu, memory, timeouts). Changing them
   * does not change what a captured image was built from.
   */
  readonly runtimeKnobs: readonly string[];

  availability(): Promise<Availability>;

  create(request: CreateSandboxRequest): Promise<CreatedSandbox>;
  inspect(instanceId: string): Promise<InstanceInfo>;
  /** Runs a command to completion; its output is capped per stream (`collectExecOutput`). */
  exec(instanceId: string, request: ExecRequest): Promise<ExecResult>;
  /**
   * Starts a command and hands its output over as it is produced, with backpressure: not reading
   * `output` stops the command at its next write. The timeout kills the process tree and `exit`
   * reports it; `kill()` does the same when the reader goes away.
   */
  execStream(instanceId: string, request: ExecRequest): Promise<ExecProcess>;
  openPty(instanceId: string, options: PtyOptions): Promise<PtyStream>;
  readFile(instanceId: string, path: string): Promise<Buffer>;
  writeFile(instanceId: string, path: string, data: Buffer, options?: WriteFileOptions): Promise<void>;
  /** A tar stream of `path` (default the workdir), entries relative to it. */
  exportWorkspace(instanceId: string, path?: string): Promise<Readable>;
  /** Unpacks a tar stream into `path` (default the workdir). */
  importWorkspace(instanceId: string, tar: Readable, path?: string): Promise<void>;
  /** Removes the compute and everything it owned. Destroying a missing instance succeeds. */
  destroy(instanceId: string): Promise<void>;
  /**
   * Stops the compute, keeping its disk (capability `stopStart`); `inspect` then reports `stopped`.
   * Stopping a stopped instance succeeds; a missing one throws `not_found`.
   */
  stop?(instanceId: string): Promise<void>;
  /** Starts a stopped instance again over the same disk (capability `stopStart`); `not_found` when it is gone. */
  start?(instanceId: string): Promise<void>;
  /** Archives a sandbox instead of destroying it (capability `archiveInsteadOfDelete`); it stops answering until started again. */
  archive?(instanceId: string): Promise<void>;
  /**
   * New sandboxes, one per target, whose filesystem is the running source's at the moment of the
   * call (capability `fork`); processes are not copied. All or nothing: when one cannot be made,
   * the ones already made are destroyed before the error is thrown. They keep the source's config.
   */
  fork?(instanceId: string, targets: ForkTarget[]): Promise<CreatedSandbox[]>;
  /** Every resource this provider holds for Sandcast, for garbage collection. */
  listInstances(): Promise<ManagedInstance[]>;
  /** Every template artefact this installation's captures made, for garbage collection (optional). */
  listCapturedTemplates?(): Promise<CapturedTemplate[]>;

  startInteractiveSetup(request: StartSetupRequest): Promise<SetupLease>;
  getInteractiveSetup(leaseId: string): Promise<InstanceInfo>;
  captureTemplate(request: CaptureRequest): Promise<TemplateRef>;
  cancelInteractiveSetup(leaseId: string): Promise<void>;
  deleteTemplate(template: TemplateRef): Promise<void>;
  listChanges(leaseId: string): Promise<FileChange[]>;

  /**
   * A byte stream to TCP `port` on the sandbox's own loopback, without giving the sandbox a route
   * out (capability `portForward`). Resolves once connected; `not_found` when nothing listens.
   */
  openPortStream?(instanceId: string, port: number): Promise<Duplex>;

  /**
   * The host directory that *is* the sandbox's directory `path` while the sandbox runs — the
   * checkpoint engine reads and restores a workspace there instead of through a tar stream — or
   * null when there is none to show (the compute runs elsewhere, it is not running, a volume
   * covers the path). `path` is resolved inside the sandbox's root (`resolveDirInsideRoot`): no
   * symlink in it leads out. `not_found` when the instance or the directory does not exist.
   * Optional: a provider without it is checkpointed through `exportWorkspace`.
   */
  workspaceHostPath?(instanceId: string, path: string): Promise<string | null>;

  /**
   * The path of the running sandbox's network namespace on this host (`/proc/<pid>/ns/net`), for
   * the egress relay (capability `egressProxy`). `not_running` when it is stopped; a sandbox that
   * shares the host's network is refused by the relay, never given a proxy.
   */
  networkNamespace?(instanceId: string): Promise<string>;

  /** Base images the provider stores itself, when it has such a store (the local provider). */
  readonly baseImages?: BaseImageStore | undefined;

  /** Releases what the provider holds in this process (connections, timers); not the sandboxes. */
  close?(): Promise<void>;
}

/** Passed to provider factories by the server. */
export interface ProviderContext {
  /** Sandcast's data directory; a provider keeps its state under `<dataDir>/providers/<id>`. */
  dataDir: string;
}
