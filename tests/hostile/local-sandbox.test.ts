import { existsSync } from 'node:fs';
import { testDatabases } from '@sandcast/db/testing';
import { createLocalProvider } from '@sandcast/provider-local';
import {
  attackScript,
  escapesIn,
  KEPT_CAPABILITIES,
  localSkipReason,
  restoreSysctls,
  snapshotSysctls,
} from '@sandcast/provider-local/testing';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { enableEnvironments, type TestServer } from '../integration/support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite } from '../integration/support/lifecycle.ts';
import { attachTerminal } from '../integration/support/terminal-client.ts';
import { attack, startHostileServer } from './support/attack.ts';

/**
 * Sandbox code on the local provider trying to reach the host (issue 10 findings 1, 7, 9, 12),
 * through the API a client or agent uses: sandbox exec, setup-session exec and the setup's browser
 * terminal (SSH uses the same PTY path).
 */
const runnable = requireForSuite('hostile local-sandbox', await localSkipReason());

describe.skipIf(!runnable)('hostile: local sandbox code against the host', () => {
  let t: TestServer;
  let environmentId: string;
  let sandboxId: string;

  beforeAll(async () => {
    const database = testDatabases().find((d) => d.kind === REAL_PROVIDER_DATABASE)!;
    t = await startHostileServer({ database, providers: (dataDir) => [createLocalProvider({ dataDir, onWarning: () => undefined })] });
    await enableEnvironments(t.client);
    environmentId = (await t.client.environments.create({ name: 'hostile-local', provider: 'local', config: { diskMb: 64 } })).id;
    sandboxId = (await t.client.sandboxes.create({ environmentId })).id;
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  }, 120_000);

  const exec = (id: string, body: Record<string, unknown>) =>
    t.fetch(`/api/sandboxes/${id}/exec`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  attack('exec writes core_pattern, kernel.panic, vm.drop_caches, vm.overcommit_memory, sysrq-trigger; lifts the masks', async () => {
    const before = await snapshotSysctls();
    const answer = await exec(sandboxId, { command: ['sh', '-c', attackScript()] });
    const changed = await restoreSysctls(before);
    expect(answer.status).toBe(200);
    expect(changed).toEqual([]);
    const { stdout } = answer.body as { stdout: string };
    expect(escapesIn(stdout, KEPT_CAPABILITIES), stdout).toEqual([]);
  });

  attack('core_pattern pointed at a script in the sandbox, then a crash: nothing runs on the host', async () => {
    const before = await snapshotSysctls();
    const marker = `/tmp/sandcast-core-${process.pid}`;
    const script = [
      `printf '#!/bin/sh\\ntouch ${marker}\\n' > /tmp/core.sh && chmod +x /tmp/core.sh`,
      // The sandbox's /tmp/core.sh lives in its upper dir; aim at it by its host path too.
      `echo "|/tmp/core.sh" > /proc/sys/kernel/core_pattern; echo "rc=$?"`,
      'sh -c "ulimit -c unlimited; kill -SEGV \\$\\$"; true',
    ].join('\n');
    const answer = await exec(sandboxId, { command: ['sh', '-c', script] });
    expect(await restoreSysctls(before)).toEqual([]);
    expect((answer.body as { stdout: string }).stdout).toMatch(/rc=[1-9]/);
    expect(existsSync(marker)).toBe(false);
  });

  attack('setup-session exec: the same writes are refused', async () => {
    const { session } = await t.client.customImages.startSetup(environmentId);
    try {
      const before = await snapshotSysctls();
      const answer = await t.fetch(`/api/environment-custom-image-setup-sessions/${session.id}/exec`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ command: ['sh', '-c', attackScript()] }),
      });
      expect(await restoreSysctls(before)).toEqual([]);
      expect(answer.status).toBe(200);
      const { stdout } = answer.body as { stdout: string };
      expect(escapesIn(stdout, KEPT_CAPABILITIES), stdout).toEqual([]);
    } finally {
      await t.client.customImages.cancel(session.id);
    }
  });

  attack('browser terminal (PTY) of a setup session: the same writes are refused', async () => {
    const { session } = await t.client.customImages.startSetup(environmentId);
    try {
      const script = Buffer.from(attackScript()).toString('base64');
      await t.client.customImages.exec(session.id, { command: ['sh', '-c', `echo ${script} | base64 -d > /tmp/attack.sh`] });
      const before = await snapshotSysctls();
      const term = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(session.id), { cols: 200, rows: 50 });
      term.type('sh /tmp/attack.sh; echo "attack-$((40+2))-done"\r');
      const output = (await term.waitFor('attack-42-done', { timeoutMs: 30_000 })).replaceAll('\r', '');
      term.connection.close();
      expect(await restoreSysctls(before)).toEqual([]);
      expect(escapesIn(output, KEPT_CAPABILITIES), output).toEqual([]);
    } finally {
      await t.client.customImages.cancel(session.id);
    }
  });

  attack('filling the disk: ENOSPC at diskMb, the sandbox keeps working', async () => {
    const fill = await exec(sandboxId, { command: ['sh', '-c', 'dd if=/dev/zero of=/var/fill bs=1M count=500 2>&1; echo "exit=$?"'] });
    expect(fill.status).toBe(200);
    expect((fill.body as { stdout: string }).stdout).toMatch(/No space left on device[\s\S]*exit=1/);
    const after = await exec(sandboxId, { command: ['sh', '-c', 'rm /var/fill && echo alive'] });
    expect((after.body as { stdout: string }).stdout).toBe('alive\n');
  });

  attack('orphans double-forked by sandbox code are reaped: no zombies pile up', async () => {
    await exec(sandboxId, { command: ['sh', '-c', 'i=0; while [ $i -lt 50 ]; do (sh -c "exit 0" &); i=$((i+1)); done'] });
    const count = 'for f in /proc/[0-9]*/status; do grep -q "^State:.*Z" "$f" 2>/dev/null && echo z; done | wc -l';
    let zombies = -1;
    for (let attempt = 0; attempt < 50 && zombies !== 0; attempt++)
      zombies = Number((((await exec(sandboxId, { command: ['sh', '-c', count] })).body as { stdout: string }).stdout ?? '').trim());
    expect(zombies).toBe(0);
  });

  attack('workdir "/../../../../tmp/x" in an environment: refused with a message, no host dir made', async () => {
    const marker = `/tmp/sandcast-workdir-${process.pid}`;
    const answer = await t.fetch('/api/environments', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'hostile-workdir', provider: 'local', config: { workdir: `/../../../..${marker}` } }),
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(answer.text).toMatch(/\.\./);
    expect(existsSync(marker)).toBe(false);
  });

  attack('exec cwd "/../../../../tmp/y": whatever the answer, no host dir is made', async () => {
    const marker = `/tmp/sandcast-cwd-${process.pid}`;
    const answer = await exec(sandboxId, { command: ['sh', '-c', 'mkdir -p . && pwd'], cwd: `/../../../..${marker}` });
    expect(answer.status).toBeLessThan(500);
    expect(existsSync(marker)).toBe(false);
  });

  attack('sandbox code ends its own init: the sandbox reads lost, exec answers a clear 409, never bwrap output', async () => {
    const victim = (await t.client.sandboxes.create({ environmentId })).id;
    expect(((await exec(victim, { command: ['hostname'] })).body as { stdout: string }).stdout).toBe('sandbox\n');
    await exec(victim, { command: ['sh', '-c', 'kill -TERM 1'] });
    let status = (await t.client.sandboxes.get(victim)).status;
    for (let attempt = 0; attempt < 250 && status === 'running'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = (await t.client.sandboxes.get(victim)).status;
    }
    expect(status).toBe('lost');
    const after = await exec(victim, { command: ['hostname'] });
    expect(after.status).toBe(409);
    expect(after.text).not.toMatch(/bwrap|Can't fork/);
    expect(after.text).toMatch(/lost/);
  });
});
