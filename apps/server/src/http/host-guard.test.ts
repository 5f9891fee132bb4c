import { describe, expect, it } from 'vitest';
import { type HostPolicy, hostRefusal, isLoopbackName, originRefusal } from './host-guard.ts';

const local: HostPolicy = { mode: 'local_trusted', allowedHosts: [], publicUrl: null };
const open: HostPolicy = { mode: 'authenticated', allowedHosts: [], publicUrl: null };
const listed: HostPolicy = {
  mode: 'authenticated',
  allowedHosts: ['sandcast.example.com', '*.corp.example', 'box:8443'],
  publicUrl: 'https://sandcast.example.com',
};

describe('Host and Origin policy', () => {
  it('knows loopback names, and names that only look like them', () => {
    for (const name of ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.255.0.9', '[::1]'])
      expect(isLoopbackName(name), name).toBe(true);
    for (const name of ['localhost.example', '127.0.0.1.nip.io', '128.0.0.1', '::1', '[::2]', 'example.com'])
      expect(isLoopbackName(name), name).toBe(false);
  });

  it('local_trusted answers loopback Hosts only, whatever their spelling tricks', () => {
    for (const host of ['127.0.0.1:7420', 'localhost', '[::1]:7420', '8080-sbx.sandboxes.localhost:7420', undefined])
      expect(hostRefusal(local, host), String(host)).toBeNull();
    for (const host of [
      'attacker.example:7420',
      'attacker.example@127.0.0.1',
      '127.0.0.1/x',
      '127.0.0.1 x',
      'localhost.attacker.example',
      '0:0',
    ]) {
      expect(hostRefusal(local, host), host).toMatch(/loopback names/);
    }
  });

  it('local_trusted refuses foreign, opaque, sandbox-served and malformed Origins', () => {
    expect(originRefusal(local, undefined, '127.0.0.1:7420')).toBeNull();
    expect(originRefusal(local, 'http://127.0.0.1:7420', '127.0.0.1:7420')).toBeNull();
    expect(originRefusal(local, 'http://localhost:5173', '127.0.0.1:7420')).toBeNull();
    for (const origin of [
      'https://attacker.example',
      'null',
      'http://8080-sbx.sandboxes.localhost:7420',
      'file://',
      'http://127.0.0.1:7420/path',
      'chrome-extension://abc',
    ]) {
      expect(originRefusal(local, origin, '127.0.0.1:7420'), origin).toMatch(/may not change anything/);
    }
  });

  it('authenticated mode: any Host until a list is set, then the list, the public URL and loopback', () => {
    expect(hostRefusal(open, 'anything.example')).toBeNull();
    expect(hostRefusal(listed, 'sandcast.example.com')).toBeNull();
    expect(hostRefusal(listed, 'a.corp.example:443')).toBeNull();
    expect(hostRefusal(listed, 'box:8443')).toBeNull();
    expect(hostRefusal(listed, '127.0.0.1:7420')).toBeNull();
    expect(hostRefusal(listed, 'box:9999')).toMatch(/SANDCAST_ALLOWED_HOSTS/);
    expect(hostRefusal(listed, 'attacker.example')).toMatch(/SANDCAST_ALLOWED_HOSTS/);
  });

  it('authenticated mode: same-origin, the public URL and listed hosts may change state; other sites may not', () => {
    expect(originRefusal(open, 'https://sandcast.internal', 'sandcast.internal')).toBeNull();
    expect(originRefusal(open, 'https://attacker.example', 'sandcast.internal')).toMatch(/SANDCAST_PUBLIC_URL/);
    expect(originRefusal(listed, 'https://sandcast.example.com', 'backend:7420')).toBeNull();
    expect(originRefusal(listed, 'https://attacker.example', 'sandcast.example.com')).toMatch(/may not change/);
  });
});
