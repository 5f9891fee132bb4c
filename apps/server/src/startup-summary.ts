import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Availability } from '@sandcast/provider-sdk';
import type { ServerConfig } from './config.ts';
import { availabilityOf } from './providers/availability.ts';
import type { RunningServer } from './server.ts';

/** What the start summary reports; gathered by `gatherStartupSummary`, printed by `formatStartupSummary`. */
export interface StartupSummary {
  url: string;
  uiBuilt: boolean;
  sshGateway: { host: string; port: number } | null;
  dataDir: string;
  /** `null`: the embedded PGlite in `<dataDir>/db`. */
  databaseUrl: string | null;
  mode: ServerConfig['deploymentMode'];
  logLevel: string;
  providers: Array<{ id: string; displayName: string; availability: Availability }>;
}

export async function gatherStartupSummary(server: RunningServer, config: ServerConfig): Promise<StartupSummary> {
  return {
    url: server.url,
    uiBuilt: existsSync(path.join(config.webDistDir, 'index.html')),
    sshGateway: server.sshGateway,
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    mode: config.deploymentMode,
    logLevel: config.logLevel,
    providers: await Promise.all(
      server.providers.list().map(async ({ provider }) => ({
        id: provider.id,
        displayName: provider.displayName,
        availability: await availabilityOf(() => provider.availability()),
      })),
    ),
  };
}

const MODE_WORDS: Record<ServerConfig['deploymentMode'], string> = {
  local_trusted: 'local_trusted (loopback only; every caller acts as the operator)',
  authenticated: 'authenticated (bearer API keys; the UI asks for one)',
};

/** The human lines printed once after start: where everything is, and which providers can run here and why not. */
export function formatStartupSummary(s: StartupSummary): string {
  const base = s.url.replace(/\/$/, '');
  const hostPort = (a: { host: string; port: number }) => (a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);
  const rows: Array<[string, string]> = [
    ['UI', s.uiBuilt ? `${base}/` : `${base}/ (not built yet: npm run build -w apps/web)`],
    ['API', `${base}/api`],
    ['API docs', `${base}/api/docs (OpenAPI: ${base}/api/openapi.json)`],
    [
      'SSH gateway',
      s.sshGateway
        ? `${hostPort(s.sshGateway)} (the ssh fallback of setup sessions)`
        : 'off (SANDCAST_SSH_PORT=off); the browser terminal still works',
    ],
    ['Data dir', s.dataDir],
    ['Database', s.databaseUrl ? `Postgres at ${describePostgres(s.databaseUrl)}` : `embedded PGlite in ${path.join(s.dataDir, 'db')}`],
    ['Mode', MODE_WORDS[s.mode]],
  ];
  const width = Math.max(...rows.map(([k]) => k.length), 'Providers'.length);
  const lines = ['Sandcast is ready.', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), '  Providers'];
  for (const p of s.providers) {
    const state = p.availability.available ? 'available' : `unavailable: ${p.availability.reason}`;
    lines.push(`    ${p.id.padEnd(8)} ${p.displayName} — ${state}`);
  }
  if (s.providers.length === 0) lines.push('    (none registered)');
  lines.push(
    `Logs follow as JSON lines at level ${s.logLevel}; each request is logged at debug (SANDCAST_LOG_LEVEL=debug shows them), errors always.`,
  );
  return `${lines.join('\n')}\n`;
}

/** host:port/database of a Postgres URL, never its user or password. */
function describePostgres(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return '(DATABASE_URL)';
  }
}
