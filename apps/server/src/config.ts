import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEPLOYMENT_MODES, type DeploymentMode, SandcastError } from '@sandcast/core';
import { DEFAULT_EXEC_OUTPUT_MAX_BYTES } from '@sandcast/provider-sdk';
import { DEFAULT_PORTS_BASE_DOMAIN } from './ports/port-hosts.ts';

/** Everything the server reads from its environment, with defaults applied. */
export interface ServerConfig {
  /** SANDCAST_HOST, default 127.0.0.1. */
  host: string;
  /** SANDCAST_PORT, default 7420 (0 picks a free port). */
  port: number;
  /** SANDCAST_DATA_DIR, default ~/.sandcast: embedded database, secret key, provider state. */
  dataDir: string;
  /** DATABASE_URL: a real Postgres; unset means embedded PGlite in <dataDir>/db. */
  databaseUrl: string | null;
  /** SANDCAST_DEPLOYMENT_MODE, default local_trusted. */
  deploymentMode: DeploymentMode;
  /** SANDCAST_ENABLE_FAKE_PROVIDER=1 registers the fake provider (tests only). */
  enableFakeProvider: boolean;
  /** SANDCAST_LOG_LEVEL, default info. */
  logLevel: string;
  /** SANDCAST_SECRET_KEY: base64 of 32 bytes; default a key file in the data dir. */
  secretKey: string | null;
  /** SANDCAST_RECONCILE_INTERVAL_SECONDS, default 15: expiry sweep and garbage collection. */
  reconcileIntervalMs: number;
  /** SANDCAST_SSH_HOST, default 127.0.0.1: where the SSH gateway listens. */
  sshHost: string;
  /** SANDCAST_SSH_PORT, default 2222 (0 picks a free port); null (`off`) disables the SSH gateway. */
  sshPort: number | null;
  /** SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION, default 4: shells and commands one SSH connection may hold open at once. */
  sshMaxChannelsPerConnection: number;
  /** SANDCAST_TERMINAL_AUTH_TIMEOUT_SECONDS, default 10: how long a terminal socket may wait for its auth frame. */
  terminalAuthTimeoutMs: number;
  /** SANDCAST_UI_SESSION_HOURS, default 12: how long a web UI login lasts. */
  uiSessionTtlMs: number;
  /** SANDCAST_WEB_DIST, default apps/web/dist: the built web UI served at `/`. */
  webDistDir: string;
  /** SANDCAST_IMAGE_IMPORT_MAX_BYTES, default 8 GiB: cap on an image import's upload and on its uncompressed size. */
  imageImportMaxBytes: number;
  /** SANDCAST_ALLOWED_HOSTS, default none: the Host names an authenticated server answers for (loopback always). */
  allowedHosts: string[];
  /** SANDCAST_PUBLIC_URL, default unset: the origin browsers reach an authenticated server at. */
  publicUrl: string | null;
  /** SANDCAST_EXEC_OUTPUT_MAX_BYTES, default 4 MiB: output an exec JSON answer keeps per stream. */
  execOutputMaxBytes: number;
  /** SANDCAST_PORTS_BASE_DOMAIN, default `sandboxes.localhost`: sandbox ports are served at `<port>-<sandbox>.<this>`. */
  portsBaseDomain: string;
  /** SANDCAST_PORTS_URL_SCHEME (`http`/`https`), default SANDCAST_PUBLIC_URL's scheme, else `http`. */
  portsUrlScheme: 'http' | 'https';
  /**
   * SANDCAST_CHECKPOINT_STORE, default `<dataDir>/checkpoints`: where checkpoint blobs live — an
   * absolute directory, or an S3-compatible bucket URL (`s3://bucket/prefix?endpoint=…`) for servers sharing Postgres.
   */
  checkpointStore: string;
  /** SANDCAST_MAX_SANDBOXES, default unset (no limit): sandboxes holding compute at once, warm-pool members and forks included. */
  maxSandboxes: number | null;
}

/** Default of SANDCAST_IMAGE_IMPORT_MAX_BYTES: 8 GiB. */
export const DEFAULT_IMAGE_IMPORT_MAX_BYTES = 8 * 1024 ** 3;

/** Where `npm run build -w apps/web` writes the UI. */
const DEFAULT_WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Reads and checks the configuration; a bad value throws with what to set instead. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const mode = env.SANDCAST_DEPLOYMENT_MODE ?? 'local_trusted';
  if (!(DEPLOYMENT_MODES as readonly string[]).includes(mode)) {
    throw new SandcastError('bad_request', `SANDCAST_DEPLOYMENT_MODE must be one of ${DEPLOYMENT_MODES.join(', ')}; got "${mode}"`);
  }
  const port = Number(env.SANDCAST_PORT ?? 7420);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new SandcastError('bad_request', `SANDCAST_PORT must be a port number (0-65535); got "${env.SANDCAST_PORT}"`);
  }
  const config: ServerConfig = {
    host: env.SANDCAST_HOST ?? '127.0.0.1',
    port,
    dataDir: path.resolve(env.SANDCAST_DATA_DIR ?? path.join(homedir(), '.sandcast')),
    databaseUrl: env.DATABASE_URL || null,
    deploymentMode: mode as DeploymentMode,
    enableFakeProvider: env.SANDCAST_ENABLE_FAKE_PROVIDER === '1',
    logLevel: env.SANDCAST_LOG_LEVEL ?? 'info',
    secretKey: env.SANDCAST_SECRET_KEY ?? null,
    reconcileIntervalMs: positiveSeconds(env.SANDCAST_RECONCILE_INTERVAL_SECONDS, 'SANDCAST_RECONCILE_INTERVAL_SECONDS', 15) * 1000,
    sshHost: env.SANDCAST_SSH_HOST ?? '127.0.0.1',
    sshPort: sshPortOf(env.SANDCAST_SSH_PORT),
    sshMaxChannelsPerConnection: positiveInteger(
      env.SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION,
      'SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION',
      4,
    ),
    terminalAuthTimeoutMs: positiveSeconds(env.SANDCAST_TERMINAL_AUTH_TIMEOUT_SECONDS, 'SANDCAST_TERMINAL_AUTH_TIMEOUT_SECONDS', 10) * 1000,
    uiSessionTtlMs: positiveSeconds(env.SANDCAST_UI_SESSION_HOURS, 'SANDCAST_UI_SESSION_HOURS', 12, 'hours') * 3_600_000,
    webDistDir: path.resolve(env.SANDCAST_WEB_DIST || DEFAULT_WEB_DIST),
    imageImportMaxBytes: positiveBytes(
      env.SANDCAST_IMAGE_IMPORT_MAX_BYTES,
      'SANDCAST_IMAGE_IMPORT_MAX_BYTES',
      DEFAULT_IMAGE_IMPORT_MAX_BYTES,
    ),
    allowedHosts: allowedHostsOf(env.SANDCAST_ALLOWED_HOSTS),
    publicUrl: publicUrlOf(env.SANDCAST_PUBLIC_URL),
    execOutputMaxBytes: execOutputMaxBytes(env.SANDCAST_EXEC_OUTPUT_MAX_BYTES),
    portsBaseDomain: portsBaseDomainOf(env.SANDCAST_PORTS_BASE_DOMAIN),
    portsUrlScheme: portsSchemeOf(env.SANDCAST_PORTS_URL_SCHEME, env.SANDCAST_PUBLIC_URL),
    checkpointStore: checkpointStoreOf(env.SANDCAST_CHECKPOINT_STORE, env.SANDCAST_DATA_DIR),
    maxSandboxes: maxSandboxesOf(env.SANDCAST_MAX_SANDBOXES),
  };
  if (config.deploymentMode === 'local_trusted' && (config.allowedHosts.length > 0 || config.publicUrl)) {
    throw new SandcastError(
      'bad_request',
      'SANDCAST_ALLOWED_HOSTS and SANDCAST_PUBLIC_URL apply to authenticated mode only; local_trusted answers loopback names alone. ' +
        'Unset them, or set SANDCAST_DEPLOYMENT_MODE=authenticated.',
    );
  }
  assertBindAllowed(config);
  return config;
}

/** local_trusted trusts every caller, so it may only listen where only this machine can reach. */
export function assertBindAllowed(config: Pick<ServerConfig, 'host' | 'deploymentMode'> & Partial<Pick<ServerConfig, 'sshHost'>>): void {
  if (config.deploymentMode === 'local_trusted' && config.sshHost !== undefined && !isLoopbackHost(config.sshHost)) {
    throw new SandcastError(
      'bad_request',
      `SANDCAST_SSH_HOST=${config.sshHost} is not a loopback address; in local_trusted mode Sandcast listens only where this machine alone can reach. ` +
        'Use 127.0.0.1, or set SANDCAST_DEPLOYMENT_MODE=authenticated.',
    );
  }
  if (config.deploymentMode === 'local_trusted' && !isLoopbackHost(config.host)) {
    throw new SandcastError(
      'bad_request',
      `SANDCAST_HOST=${config.host} is not a loopback address, and local_trusted mode lets every caller act as admin. ` +
        'Bind to 127.0.0.1, or set SANDCAST_DEPLOYMENT_MODE=authenticated to require API keys.',
    );
  }
}

function allowedHostsOf(raw: string | undefined): string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (!/^(\*\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*(:\d{1,5})?$/.test(entry) && !/^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(entry)) {
      throw new SandcastError(
        'bad_request',
        `SANDCAST_ALLOWED_HOSTS entries are host names, optionally with :port or a leading "*."; got "${entry}"`,
      );
    }
  }
  return entries;
}

function portsBaseDomainOf(raw: string | undefined): string {
  const domain = (raw || DEFAULT_PORTS_BASE_DOMAIN).toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)) {
    throw new SandcastError(
      'bad_request',
      `SANDCAST_PORTS_BASE_DOMAIN must be a DNS name with at least two labels, such as sandboxes.example.com; got "${raw}"`,
    );
  }
  return domain;
}

function portsSchemeOf(raw: string | undefined, publicUrl: string | undefined): 'http' | 'https' {
  if (raw === 'http' || raw === 'https') return raw;
  if (raw) throw new SandcastError('bad_request', `SANDCAST_PORTS_URL_SCHEME must be "http" or "https"; got "${raw}"`);
  return publicUrl?.startsWith('https:') ? 'https' : 'http';
}

function publicUrlOf(raw: string | undefined): string | null {
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SandcastError('bad_request', `SANDCAST_PUBLIC_URL must be a URL such as https://sandcast.example.com; got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SandcastError('bad_request', `SANDCAST_PUBLIC_URL must be an http(s) URL; got "${raw}"`);
  }
  return url.origin;
}

function sshPortOf(raw: string | undefined): number | null {
  if (raw === 'off') return null;
  const port = Number(raw ?? 2222);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new SandcastError('bad_request', `SANDCAST_SSH_PORT must be a port number (0-65535) or "off"; got "${raw}"`);
  }
  return port;
}

/** The JSON answer is built in memory: past 256 MiB a string no longer fits safely (use the stream). */
const MAX_EXEC_OUTPUT_SETTING = 256 * 1024 * 1024;

/** SANDCAST_EXEC_OUTPUT_MAX_BYTES: a byte count like the other size settings, bounded above. */
function execOutputMaxBytes(raw: string | undefined): number {
  const name = 'SANDCAST_EXEC_OUTPUT_MAX_BYTES';
  const value = positiveBytes(raw, name, DEFAULT_EXEC_OUTPUT_MAX_BYTES);
  if (value > MAX_EXEC_OUTPUT_SETTING)
    throw new SandcastError(
      'bad_request',
      `${name} must be at most 256M; got "${raw}". For more output, stream it (Accept: application/x-ndjson)`,
    );
  return value;
}

function positiveSeconds(raw: string | undefined, name: string, fallback: number, unit = 'seconds'): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new SandcastError('bad_request', `${name} must be a positive number of ${unit}; got "${raw}"`);
  return value;
}

/** A byte count: digits, optionally with a K, M, G or T suffix (powers of 1024), e.g. `8G`. */
function positiveBytes(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const match = /^(\d+)\s*([KMGT]?)(i?B)?$/i.exec(raw.trim());
  const power = match ? ' KMGT'.indexOf((match[2] || ' ').toUpperCase()) : -1;
  const value = match ? Number(match[1]) * 1024 ** power : Number.NaN;
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new SandcastError('bad_request', `${name} must be a positive number of bytes, optionally with K, M, G or T (8G); got "${raw}"`);
  return value;
}

/** SANDCAST_MAX_SANDBOXES: unset or empty for no limit, else a whole number from 1 to 100000. */
function maxSandboxesOf(raw: string | undefined): number | null {
  if (raw === undefined || raw === '') return null;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 100_000) {
    throw new SandcastError(
      'bad_request',
      `SANDCAST_MAX_SANDBOXES must be a whole number from 1 to 100000, or unset for no limit; got "${raw}"`,
    );
  }
  return value;
}

function positiveInteger(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 1000) {
    throw new SandcastError('bad_request', `${name} must be a whole number from 1 to 1000; got "${raw}"`);
  }
  return value;
}

function checkpointStoreOf(value: string | undefined, dataDir: string | undefined): string {
  const fallback = path.join(path.resolve(dataDir ?? path.join(homedir(), '.sandcast')), 'checkpoints');
  if (value === undefined || value.trim() === '') return fallback;
  if (value.startsWith('s3://')) return value;
  if (!path.isAbsolute(value)) {
    throw new SandcastError(
      'bad_request',
      `SANDCAST_CHECKPOINT_STORE must be an absolute directory or an S3-compatible bucket URL (s3://bucket/prefix?endpoint=http://host:port&region=…); got "${value}"`,
    );
  }
  return path.resolve(value);
}
