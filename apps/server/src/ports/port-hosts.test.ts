import { describe, expect, it } from 'vitest';
import { matchPortHost, portOrigin } from './port-hosts.ts';

const HEX = '0123456789abcdef0123456789abcdef';
const policy = { baseDomain: 'sandboxes.localhost', scheme: 'http', portSuffix: () => ':7420' } as const;

describe('port host names', () => {
  it('round-trips a sandbox id and port through the host name', () => {
    const origin = portOrigin(policy, { kind: 'sandbox', id: `sbx_${HEX}` }, 8080);
    expect(origin).toBe(`http://8080-sbx-${HEX}.sandboxes.localhost:7420`);
    expect(matchPortHost('sandboxes.localhost', new URL(origin).host)).toEqual({
      kind: 'port',
      port: 8080,
      owner: { kind: 'sandbox', id: `sbx_${HEX}` },
    });
    expect(matchPortHost('sandboxes.example.com', `443-SBX-${HEX.toUpperCase()}.Sandboxes.Example.com.`)).toEqual({
      kind: 'port',
      port: 443,
      owner: { kind: 'sandbox', id: `sbx_${HEX}` },
    });
  });

  it("gives a setup session's port a name of its own, never a sandbox's", () => {
    const origin = portOrigin(policy, { kind: 'setup', id: `setup_${HEX}` }, 3000);
    expect(origin).toBe(`http://3000-setup-${HEX}.sandboxes.localhost:7420`);
    expect(matchPortHost('sandboxes.localhost', new URL(origin).host)).toEqual({
      kind: 'port',
      port: 3000,
      owner: { kind: 'setup', id: `setup_${HEX}` },
    });
    expect(origin).not.toBe(portOrigin(policy, { kind: 'sandbox', id: `sbx_${HEX}` }, 3000));
  });

  it('claims every name under the base domain, and answers only well-formed ones', () => {
    for (const host of [
      'sandboxes.localhost',
      `0-sbx-${HEX}.sandboxes.localhost`,
      `65536-sbx-${HEX}.sandboxes.localhost`,
      `080-sbx-${HEX}.sandboxes.localhost`,
      `80-sbx_${HEX}.sandboxes.localhost`,
      `80-sbx-${HEX}0.sandboxes.localhost`,
      `80-sbx-${HEX}.a.sandboxes.localhost`,
      `80-setup_${HEX}.sandboxes.localhost`,
      `80-setups-${HEX}.sandboxes.localhost`,
      `0-setup-${HEX}.sandboxes.localhost`,
      `80-env-${HEX}.sandboxes.localhost`,
      '..sandboxes.localhost',
    ]) {
      expect(matchPortHost('sandboxes.localhost', host), host).toEqual({ kind: 'invalid' });
    }
    for (const host of ['localhost:7420', '127.0.0.1', 'xsandboxes.localhost', `80-sbx-${HEX}.sandboxes.localhost.evil.com`, undefined]) {
      expect(matchPortHost('sandboxes.localhost', host), String(host)).toBeNull();
    }
  });
});
