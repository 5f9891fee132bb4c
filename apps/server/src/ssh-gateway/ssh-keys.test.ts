import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';
import { afterEach, describe, expect, it } from 'vitest';
import { generateParsableKeyPair, loadGatewayHostKey, sshFingerprint } from './ssh-keys.ts';

describe('SSH keys in the data dir', () => {
  let dir: string | null = null;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('creates the gateway host key once (0600) and reuses it after a restart', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sandcast-keys-'));
    const first = await loadGatewayHostKey(dir);
    const file = path.join(dir, 'ssh', 'gateway_host_ed25519_key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const again = await loadGatewayHostKey(dir);
    expect(again).toEqual(first);
    const parsed = ssh2.utils.parseKey(first.privateKey);
    if (parsed instanceof Error || Array.isArray(parsed)) throw new Error('expected one key');
    expect(parsed.type).toBe('ssh-ed25519');
    expect(sshFingerprint(parsed.getPublicSSH())).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });

  it('regression: every generated key parses back (ssh2 now and then emits one that does not)', () => {
    for (let i = 0; i < 500; i++) {
      expect(ssh2.utils.parseKey(generateParsableKeyPair('sandcast-ssh-gateway').private)).not.toBeInstanceOf(Error);
    }
  });
});
