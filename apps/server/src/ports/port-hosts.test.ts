import { describe, expect, it } from 'vitest';
import { matchPortHost, portOrigin } from './port-hosts.ts';

const HEX = '0123456789abcdef0123456789abcdef';
const policy = { baseDomain: 'sandboxes.localhost', scheme: 'http', portSuffix: () => ':7420' } as const;

describe('port host names', () => {
  it("round-trips each owner's id and port through its host name; a sandbox's and a setup session's never meet", () => {
    const sandbox = { kind: 'sandbox', id: `sbx_${HEX}` } as const;
    const setup = { kind: 'setup', id: `setup_${HEX}` } as const;
    for (const [owner, port, host] of [
      [sandbox, 8080, `8080-sbx-${HEX}.sandboxes.localhost:7420`],
      [setup, 3000, `3000-setup-${HEX}.sandboxes.localhost:7420`],
    ] as const) {
      const origin = portOrigin(policy, owner, port);
      expect(origin).toBe(`http://${host}`);
      expect(matchPortHost('sandboxes.localhost', new URL(origin).host)).toEqual({ kind: 'port', port, owner });
    }
    expect(portOrigin(policy, setup, 3000)).not.toBe(portOrigin(policy, sandbox, 3000));
    expect(matchPortHost('sandboxes.example.com', `443-SBX-${HEX.toUpperCase()}.Sandboxes.Example.com.`)).toEqual({
      kind: 'port',
      port: 443,
      owner: sandbox,
    });
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
