import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeProvider } from '@sandcast/provider-fake';
import { afterAll, describe, expect, it } from 'vitest';
import { createProviderRegistry } from '../providers/provider-registry.ts';
import { withEgressEnv } from './egress-providers.ts';

describe('the proxy variables in exec and PTY', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('go to every command of an instance with egress, under what the caller sets, and nowhere else', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'egress-env-'));
    dirs.push(dir);
    const fake = createFakeProvider({ dataDir: dir });
    const registry = createProviderRegistry([fake]);
    const { instanceId: withProxy } = await fake.create({ sandboxId: 'sbx_a', environmentId: 'env_a', config: {} });
    const { instanceId: without } = await fake.create({ sandboxId: 'sbx_b', environmentId: 'env_a', config: {} });
    const env = { HTTPS_PROXY: 'http://127.0.0.1:3128', NO_PROXY: 'localhost' };
    const wrapped = withEgressEnv(registry, { envFor: (id) => (id === withProxy ? env : undefined) });
    const provider = wrapped.get('fake')!.provider;
    expect(wrapped.get('fake')).toBe(wrapped.get('fake'));
    expect(wrapped.list()[0]!.provider.id).toBe('fake');

    const printed = await provider.exec(withProxy, { command: ['sh', '-c', 'echo "$HTTPS_PROXY $NO_PROXY"'], env: { NO_PROXY: 'mine' } });
    expect(printed.stdout).toBe('http://127.0.0.1:3128 mine\n');
    expect((await provider.exec(without, { command: ['sh', '-c', 'echo "[$HTTPS_PROXY]"'] })).stdout).toBe('[]\n');

    const streamed = await provider.execStream(withProxy, { command: ['sh', '-c', 'echo "$HTTPS_PROXY"'] });
    let text = '';
    for await (const chunk of streamed.output) text += chunk.data.toString();
    expect(text).toBe('http://127.0.0.1:3128\n');

    const pty = await provider.openPty(withProxy, { cols: 80, rows: 24, command: ['sh', '-c', 'echo "pty:$HTTPS_PROXY"'] });
    const seen = await new Promise<string>((resolve) => {
      let all = '';
      pty.onData((chunk) => {
        all += chunk.toString();
      });
      pty.onExit(() => resolve(all));
    });
    expect(seen).toContain('pty:http://127.0.0.1:3128');
    await fake.destroy(withProxy);
    await fake.destroy(without);
  });
});
