import { describe, expect, it } from 'vitest';
import { formatStartupSummary, type StartupSummary } from './startup-summary.ts';

const base: StartupSummary = {
  url: 'http://127.0.0.1:7420',
  uiBuilt: true,
  sshGateway: { host: '127.0.0.1', port: 2222 },
  dataDir: '/srv/sandcast',
  databaseUrl: null,
  mode: 'local_trusted',
  logLevel: 'info',
  providers: [
    { id: 'local', displayName: 'Local (namespaces)', availability: { available: true } },
    { id: 'docker', displayName: 'Docker', availability: { available: false, reason: 'no Docker engine at /var/run/docker.sock' } },
  ],
};

describe('formatStartupSummary', () => {
  it('says where the UI, API, docs, SSH gateway, data and database are, and which providers run and why not', () => {
    const text = formatStartupSummary(base);
    expect(text).toMatch(/^ {2}UI +http:\/\/127\.0\.0\.1:7420\/$/m);
    expect(text).toContain('http://127.0.0.1:7420/api/docs');
    expect(text).toMatch(/SSH gateway +127\.0\.0\.1:2222/);
    expect(text).toContain('embedded PGlite in /srv/sandcast/db');
    expect(text).toContain('docker   Docker — unavailable: no Docker engine at /var/run/docker.sock');
    expect(text).toContain('local    Local (namespaces) — available');
  });

  it('names a Postgres without its credentials, an unbuilt UI and a gateway that is off', () => {
    const text = formatStartupSummary({
      ...base,
      databaseUrl: 'postgres://admin:hunter2@db.internal:5432/sandcast',
      uiBuilt: false,
      sshGateway: null,
    });
    expect(text).toContain('Postgres at db.internal:5432/sandcast');
    expect(text).not.toContain('hunter2');
    expect(text).toContain('not built yet: npm run build -w apps/web');
    expect(text).toMatch(/SSH gateway +off/);
  });
});
