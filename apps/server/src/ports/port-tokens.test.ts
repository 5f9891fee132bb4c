import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox } from '../services/secrets.ts';
import { issuePortToken, verifyPortToken } from './port-tokens.ts';

const grant = { owner: { kind: 'sandbox', id: 'sbx_a' }, port: 8080, openedAt: '2026-11-30T18:00:00.000Z' } as const;

describe('port tokens', () => {
  const secrets = createSecretBox(randomBytes(32));
  const now = Date.parse('2026-11-30T18:30:00.000Z');
  const token = issuePortToken(secrets, grant, now + 60_000);

  it('grant exactly the owner, port and opening they were issued for, until they expire', () => {
    expect(verifyPortToken(secrets, grant, token, now)).toBe(true);
    expect(verifyPortToken(secrets, grant, token, now + 60_000)).toBe(false);
    expect(verifyPortToken(secrets, { ...grant, owner: { kind: 'sandbox', id: 'sbx_b' } }, token, now)).toBe(false);
    // The same id under the other kind of owner: a sandbox's token never opens a setup session's port.
    expect(verifyPortToken(secrets, { ...grant, owner: { kind: 'setup', id: 'sbx_a' } }, token, now)).toBe(false);
    expect(verifyPortToken(secrets, { ...grant, port: 8081 }, token, now)).toBe(false);
    expect(verifyPortToken(secrets, { ...grant, openedAt: '2026-11-30T18:10:00.000Z' }, token, now)).toBe(false);
    expect(verifyPortToken(createSecretBox(randomBytes(32)), grant, token, now)).toBe(false);
  });

  it('refuse a changed expiry, a changed signature and malformed text', () => {
    const [expiry, mac] = token.split('.') as [string, string];
    const later = (Number.parseInt(expiry, 36) + 3_600_000).toString(36);
    for (const forged of [
      `${later}.${mac}`,
      `${expiry}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      '',
      '.',
      `${token}.x`,
      `${expiry}.${mac}\0`,
    ]) {
      expect(verifyPortToken(secrets, grant, forged, now), forged).toBe(false);
    }
  });
});
