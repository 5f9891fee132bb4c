import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProviderError } from '@sandcast/provider-sdk';
import Docker from 'dockerode';

export const PROVIDER_ID = 'docker';
const DEFAULT_SOCKET = '/var/run/docker.sock';

/** An engine address normalised to what dockerode takes, plus the text shown to operators. */
export interface EngineAddress {
  /** Canonical form: `unix:///var/run/docker.sock` or `tcp://127.0.0.1:2375`. */
  url: string;
  options: Docker.DockerOptions;
}

/** Parses `/path.sock`, `unix:///path.sock` or `tcp://host:port` (TLS when DOCKER_TLS_VERIFY is set). */
export function parseDockerHost(value: string, env: NodeJS.ProcessEnv = process.env): EngineAddress {
  const text = value.trim();
  if (text.startsWith('/') || text.startsWith('unix://')) {
    const socketPath = text.startsWith('unix://') ? text.slice('unix://'.length) : text;
    return { url: `unix://${socketPath}`, options: { socketPath } };
  }
  if (text.startsWith('tcp://') || text.startsWith('http://') || text.startsWith('https://')) {
    const parsed = new URL(text.replace(/^tcp:/, 'http:'));
    const tls = text.startsWith('https://') || (env.DOCKER_TLS_VERIFY !== undefined && env.DOCKER_TLS_VERIFY !== '');
    const port = parsed.port ? Number(parsed.port) : tls ? 2376 : 2375;
    const options: Docker.DockerOptions = { host: parsed.hostname, port, protocol: tls ? 'https' : 'http' };
    if (tls && env.DOCKER_CERT_PATH) {
      options.ca = readFileSync(join(env.DOCKER_CERT_PATH, 'ca.pem'));
      options.cert = readFileSync(join(env.DOCKER_CERT_PATH, 'cert.pem'));
      options.key = readFileSync(join(env.DOCKER_CERT_PATH, 'key.pem'));
    }
    return { url: `tcp://${parsed.hostname}:${port}`, options };
  }
  throw new ProviderError({
    provider: PROVIDER_ID,
    code: 'invalid_config',
    message: `Docker host "${value}" is not a socket path, unix:// or tcp:// address`,
  });
}

/** The provider's default engine: the explicit option, else DOCKER_HOST, else the standard socket. */
export function defaultEngineAddress(option: string | undefined, env: NodeJS.ProcessEnv = process.env): EngineAddress {
  return parseDockerHost(option ?? (env.DOCKER_HOST || DEFAULT_SOCKET), env);
}

/** A dockerode client per engine address, created on first use. */
export class EnginePool {
  readonly defaultAddress: EngineAddress;
  /** Per engine: whether its storage driver sizes a container's rootfs (`--storage-opt size=`). */
  readonly storageOptSupported = new Map<string, boolean>();

  private readonly clients = new Map<string, Docker>();
  private readonly addresses = new Map<string, EngineAddress>();

  constructor(defaultAddress: EngineAddress) {
    this.defaultAddress = defaultAddress;
    this.addresses.set(defaultAddress.url, defaultAddress);
  }

  /** The client for `url` (default: the provider's engine). */
  client(url?: string): Docker {
    const key = url ?? this.defaultAddress.url;
    let client = this.clients.get(key);
    if (!client) {
      const address = this.addresses.get(key) ?? parseDockerHost(key);
      this.addresses.set(key, address);
      client = new Docker(address.options);
      this.clients.set(key, client);
    }
    return client;
  }

  /** Registers an engine named by an environment config; returns its canonical url. */
  register(dockerHost: string | undefined): string {
    if (!dockerHost) return this.defaultAddress.url;
    const address = parseDockerHost(dockerHost);
    if (!this.addresses.has(address.url)) this.addresses.set(address.url, address);
    return address.url;
  }

  /** Every engine this provider has talked to (the default first), for garbage collection. */
  urls(): string[] {
    return [...this.addresses.keys()];
  }
}

/**
 * Instance ids are container ids. A container on an engine other than the provider's default
 * carries the engine after an `@`, so later calls without the config still find it.
 */
export interface InstanceAddress {
  containerId: string;
  engineUrl: string | undefined;
}

export function formatInstanceId(containerId: string, engineUrl: string, pool: EnginePool): string {
  return engineUrl === pool.defaultAddress.url ? containerId : `${containerId}@${engineUrl}`;
}

export function parseInstanceId(instanceId: string): InstanceAddress {
  const at = instanceId.indexOf('@');
  if (at < 0) return { containerId: instanceId, engineUrl: undefined };
  return { containerId: instanceId.slice(0, at), engineUrl: instanceId.slice(at + 1) };
}

interface DockerodeError {
  statusCode?: number;
  code?: string;
  reason?: string;
  json?: { message?: string } | null;
  message?: string;
}

/** HTTP status of an engine reply carried by a dockerode error, if any. */
export function statusOf(error: unknown): number | undefined {
  return (error as DockerodeError | null)?.statusCode;
}

/** The engine's own message for an error, without dockerode's "(HTTP code 404) …" prefix. */
export function engineMessage(error: unknown): string {
  const e = error as DockerodeError | null;
  return e?.json?.message ?? e?.reason ?? e?.message ?? String(error);
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'EPERM', 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', 'EPIPE']);

/** True when the engine itself could not be reached (socket missing, refused, no permission). */
export function isUnreachable(error: unknown): boolean {
  const code = (error as DockerodeError | null)?.code;
  return code !== undefined && UNREACHABLE_CODES.has(code);
}

/**
 * Turns a dockerode failure into a ProviderError. `what` names the object for a 404
 * ("sandbox abc", "image x"); `action` is what we were doing, for the message.
 */
export function toProviderError(error: unknown, context: { action: string; what?: string; engineUrl?: string }): ProviderError {
  if (error instanceof ProviderError) return error;
  const status = statusOf(error);
  const detail = engineMessage(error);
  if (isUnreachable(error)) {
    return new ProviderError({
      provider: PROVIDER_ID,
      code: 'unavailable',
      retryable: true,
      message: `no Docker engine reachable at ${context.engineUrl ?? 'the configured address'} while trying to ${context.action} (${detail}); start dockerd or fix DOCKER_HOST`,
      cause: error,
    });
  }
  if (status === 404) {
    return new ProviderError({
      provider: PROVIDER_ID,
      code: 'not_found',
      message: `${context.what ?? 'the Docker object'} does not exist (any more): ${detail}`,
      cause: error,
    });
  }
  if (status === 409) {
    return new ProviderError({
      provider: PROVIDER_ID,
      code: 'in_use',
      message: `cannot ${context.action}: ${detail}`,
      cause: error,
    });
  }
  return new ProviderError({
    provider: PROVIDER_ID,
    code: 'backend',
    retryable: status === undefined || status >= 500,
    message: `Docker could not ${context.action}: ${detail}`,
    cause: error,
  });
}

/**
 * Rejects with a `timeout` ProviderError when the engine has not answered `promise` within `ms`:
 * a wedged engine must never hang the server. The timer never holds the process open.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, context: { action: string; engineUrl: string }): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new ProviderError({
            provider: PROVIDER_ID,
            code: 'timeout',
            retryable: true,
            message: `the Docker engine at ${context.engineUrl} did not ${context.action} within ${Math.round(ms / 1000)} s; check \`docker info\` and the engine's log`,
          }),
        ),
      ms,
    );
    timer.unref();
  });
  // A late rejection after the deadline fired is not an unhandled one.
  promise.catch(() => undefined);
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** How long a short engine call (inspect, pause, remove, exec start) may take. */
export const ENGINE_CALL_DEADLINE_MS = 30_000;
