import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { maskConfig, openConfig, resolveSecretPlaceholders, sealConfig } from './config-secrets.ts';
import { createSecretBox, loadSecretKey } from './secrets.ts';

describe('secret box', () => {
  const box = createSecretBox(randomBytes(32));

  it('round-trips values and never repeats a ciphertext', () => {
    const a = box.encrypt('same');
    const b = box.encrypt('same');
    expect(a.$encrypted).not.toBe(b.$encrypted);
    expect(box.decrypt(a)).toBe('same');
    expect(box.decrypt(box.encrypt({ nested: [1, 2] }))).toEqual({ nested: [1, 2] });
  });

  it('refuses a tampered ciphertext and a foreign key', () => {
    const sealed = box.encrypt('value');
    const parts = sealed.$encrypted.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] = (body[0] ?? 0) ^ 1;
    parts[3] = body.toString('base64url');
    expect(() => box.decrypt({ $encrypted: parts.join('.') })).toThrow();
    expect(() => createSecretBox(randomBytes(32)).decrypt(sealed)).toThrow();
  });

  it('creates the key file once, with mode 0600, and reuses it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sandcast-key-'));
    try {
      const first = await loadSecretKey({ dataDir: dir, configured: null });
      const second = await loadSecretKey({ dataDir: dir, configured: null });
      expect(first.equals(second)).toBe(true);
      expect(first.length).toBe(32);
      expect((await stat(path.join(dir, 'secret.key'))).mode & 0o777).toBe(0o600);
      expect((await readFile(path.join(dir, 'secret.key'), 'utf8')).trim()).toBe(first.toString('base64'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('takes a configured key and refuses one of the wrong length', async () => {
    const key = randomBytes(32);
    expect((await loadSecretKey({ dataDir: '/nonexistent', configured: key.toString('base64') })).equals(key)).toBe(true);
    await expect(loadSecretKey({ dataDir: '/nonexistent', configured: 'c2hvcnQ=' })).rejects.toThrow(/32 bytes/);
  });
});

describe('config secrets', () => {
  const box = createSecretBox(randomBytes(32));

  it('seals secret paths, masks them for clients, opens them for providers', () => {
    const sealed = sealConfig({ region: 'eu', auth: { token: 't0p' } }, ['auth.token'], box);
    expect(JSON.stringify(sealed)).not.toContain('t0p');
    expect(maskConfig(sealed)).toEqual({ region: 'eu', auth: { token: { secret: true, set: true } } });
    expect(openConfig(sealed, box)).toEqual({ region: 'eu', auth: { token: 't0p' } });
  });

  it('resolves a placeholder to the stored secret, or drops it when there is none', () => {
    const incoming = { token: { secret: true, set: true }, region: 'us' };
    expect(resolveSecretPlaceholders(incoming, ['token'], { token: 'old', region: 'eu' })).toEqual({ token: 'old', region: 'us' });
    expect(resolveSecretPlaceholders(incoming, ['token'], null)).toEqual({ region: 'us' });
  });
});
