import { describe, expect, it } from 'vitest';
import { likelySecrets } from './secret-scan.ts';

const file = (path: string, kind = 'added') => ({ path, kind, type: 'file' });

describe('likelySecrets', () => {
  it('flags keys, cloud credentials and logins, not public keys or ordinary files', () => {
    const warnings = likelySecrets([
      file('/root/.ssh/id_ed25519'),
      file('/root/.ssh/id_ed25519.pub'),
      file('/root/.aws/credentials'),
      file('/home/dev/.config/gh/hosts.yml', 'modified'),
      file('/workspace/.env'),
      file('/usr/bin/node'),
      file('/root/.npmrc'),
      { path: '/root/.kube/config', kind: 'deleted', type: 'file' },
    ]);
    expect(warnings.map((w) => w.path)).toEqual([
      '/root/.ssh/id_ed25519',
      '/root/.aws/credentials',
      '/home/dev/.config/gh/hosts.yml',
      '/workspace/.env',
      '/root/.npmrc',
    ]);
    expect(warnings[0]?.reason).toBe('SSH private key');
  });
});
