import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { enableEnvironments, type TestServer } from '../integration/support/harness.ts';
import { attack, startHostileServer } from './support/attack.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

// Made-up credentials in the shapes real ones have.
const OPENAI = `sk-proj-${'Zk3Qw9Xr2Lm8Vb7Np4Ty6Hs1'.repeat(2)}`;
const GITHUB = 'ghp_9fK2xQ7LmZ3vB8nR1tY6wP4sD0hJ5gC2aE7u';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Lm3Tk2V';
const HISTORY_TOKEN = 'xoxb-2048-4096-Qm8Zt3Lp9Wk2Rv7Ns5Bx1Hc4';

describe('hostile: credentials written into a setup sandbox are caught by the capture review (finding 14)', () => {
  let t: TestServer;
  let sessionId: string;
  beforeAll(async () => {
    t = await startHostileServer({ database: pglite });
    await enableEnvironments(t.client);
    const env = await t.client.environments.create({ name: 'secrets', provider: 'fake', config: {} });
    sessionId = (await t.client.customImages.startSetup(env.id)).session.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  attack('keys in config.js and YAML, one appended to .bashrc and a .bash_history: each warned with its line, none echoed', async () => {
    const script = [
      `printf 'const a = 1;\\nconst b = 2;\\nmodule.exports = { openai: "${OPENAI}" };\\n' > config.js`,
      `printf 'service:\\n  name: build\\n  auth:\\n    token: ${GITHUB}\\n' > deploy.yaml`,
      `printf '# ~/.bashrc\\nalias ll="ls -l"\\n' > .bashrc`,
      `echo 'export AWS_SECRET_ACCESS_KEY=${AWS_SECRET}' >> .bashrc`,
      `printf 'ls\\ncd /workspace\\ncurl -H "Authorization: Bearer ${HISTORY_TOKEN}" https://slack.example\\n' > .bash_history`,
      `printf 'just notes, no secrets\\n' > notes.txt`,
    ].join(' && ');
    expect((await t.client.customImages.exec(sessionId, { command: ['sh', '-c', script] })).exitCode).toBe(0);

    const answer = await t.fetch(`/api/environment-custom-image-setup-sessions/${sessionId}/changes`);
    expect(answer.status).toBe(200);
    for (const secret of [OPENAI, GITHUB, AWS_SECRET, HISTORY_TOKEN]) expect(answer.text).not.toContain(secret);

    const changes = await t.client.customImages.changes(sessionId);
    const byPath = (p: string) => changes.warnings.filter((w) => w.path === `/workspace/${p}`);
    expect(byPath('config.js')).toEqual([{ path: '/workspace/config.js', line: 3, reason: 'API key (sk-…)' }]);
    expect(byPath('deploy.yaml')).toEqual([{ path: '/workspace/deploy.yaml', line: 4, reason: 'GitHub token (ghp_/gho_/…)' }]);
    expect(byPath('.bashrc')).toEqual([{ path: '/workspace/.bashrc', line: 3, reason: 'AWS secret access key' }]);
    expect(byPath('.bash_history')).toEqual([
      { path: '/workspace/.bash_history', reason: 'shell history (commands typed during setup, often with tokens)' },
      { path: '/workspace/.bash_history', line: 3, reason: 'Slack token (xox…-)' },
    ]);
    expect(byPath('notes.txt')).toEqual([]);
    expect(changes.contentScan).toMatchObject({ filesScanned: 5, filesSkipped: 0 });
  });

  attack('a binary file and an oversized file are not read; the review still answers', async () => {
    const script = [
      `printf '\\000\\001${GITHUB}' > blob.bin.data`,
      `head -c 300000 /dev/zero | tr '\\0' 'a' > big.txt && echo ' token=${GITHUB}' >> big.txt`,
    ].join(' && ');
    expect((await t.client.customImages.exec(sessionId, { command: ['sh', '-c', script] })).exitCode).toBe(0);
    const changes = await t.client.customImages.changes(sessionId);
    expect(changes.warnings.filter((w) => w.path.endsWith('blob.bin.data') || w.path.endsWith('big.txt'))).toEqual([]);
  });
});
