import { DEFAULT_SANDBOX_SPEC } from '@sandcast/contracts';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../format.ts';
import { buildProgram } from '../program.ts';

/** What the commands sent, and a small server that answers them. */
interface Sent {
  method: string;
  path: string;
  body: unknown;
}

const at = '2026-01-01T00:00:00Z';
const spec = structuredClone(DEFAULT_SANDBOX_SPEC);
const environment = {
  id: 'env_1',
  name: 'dev',
  provider: 'fake',
  config: {},
  connectionId: null,
  spec,
  currentRevision: { id: 'rev_2', number: 2, createdAt: at },
  createdAt: at,
  updatedAt: at,
};
const checkpoint = {
  id: `ckp_${'a'.repeat(32)}`,
  generation: 1,
  trigger: 'manual',
  storedBytes: 1536,
  totalBytes: 4096,
  fileCount: 3,
  changedPaths: 2,
  createdAt: at,
  attachedAt: at,
  current: true,
};
const revisions = [2, 1].map((n) => ({
  id: `rev_${n}`,
  number: n,
  createdAt: at,
  environmentId: 'env_1',
  provider: 'fake',
  config: {},
  spec,
}));

function agentFrom(body: Record<string, unknown>, number: number) {
  return {
    id: 'agt_1',
    name: 'coder',
    displayName: body.displayName ?? null,
    description: body.description ?? null,
    currentVersion: {
      id: `agv_${number}`,
      agentId: 'agt_1',
      number,
      sandboxPolicy: body.sandboxPolicy,
      capabilities: body.capabilities ?? [],
      createdAt: at,
    },
    archivedAt: null,
    createdAt: at,
    updatedAt: at,
  };
}

describe('agent, session and key commands send what the flags say', () => {
  let sent: Sent[];
  let agent: ReturnType<typeof agentFrom>;
  let out: string;

  beforeEach(() => {
    sent = [];
    out = '';
    agent = agentFrom({ sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: 'rev_1' } } } }, 1);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    vi.stubGlobal('fetch', async (url: URL, init: RequestInit) => {
      const path = new URL(String(url)).pathname;
      const method = init.method ?? 'GET';
      const body = init.body ? JSON.parse(String(init.body)) : undefined;
      sent.push({ method, path, body });
      const answer = (value: unknown) =>
        new Response(JSON.stringify(value), { status: 200, headers: { 'content-type': 'application/json' } });
      const route = `${method} ${path}`;
      if (route === 'GET /api/environments') return answer({ environments: [environment] });
      if (route === 'GET /api/environments/env_1/revisions') return answer({ revisions });
      if (route === 'GET /api/agents') return answer({ agents: [agent] });
      if (route === 'POST /api/agents') return answer(agentFrom(body, 1));
      if (route === 'PATCH /api/agents/agt_1') {
        const next = { ...agent.currentVersion, ...body };
        return answer(agentFrom({ ...agent, ...body, sandboxPolicy: next.sandboxPolicy, capabilities: next.capabilities }, 2));
      }
      if (route === 'POST /api/sessions')
        return answer({
          id: 'ses_1',
          agentId: 'agt_1',
          agentVersionId: 'agv_1',
          status: 'active',
          primarySandboxId: 'sbx_1',
          bindingName: 'main',
          createdAt: at,
          endedAt: null,
        });
      if (route === 'POST /api/sessions/ses_1/exec')
        return new Response(
          `${JSON.stringify({ type: 'exit', exitCode: 5, timedOut: false, durationMs: 1, truncated: { stdout: false, stderr: false }, totalBytes: { stdout: 0, stderr: 0 } })}\n`,
          {
            status: 200,
          },
        );
      if (route === 'POST /api/sessions/ses_2/exec')
        return new Response(
          `${JSON.stringify({ type: 'exit', exitCode: 0, timedOut: false, durationMs: 1, truncated: { stdout: false, stderr: false }, totalBytes: { stdout: 0, stderr: 0 }, recovered: { fromGeneration: 1, toGeneration: 2, checkpointId: 'ckp_1', processStateLost: true } })}\n`,
          { status: 200 },
        );
      if (route === 'GET /api/sessions/ses_1/sandbox/checkpoints')
        return answer({ checkpoints: [checkpoint], currentCheckpointId: checkpoint.id, retention: 20 });
      if (route === 'POST /api/sessions/ses_1/sandbox/checkpoints') return answer({ checkpoint });
      if (route === `POST /api/sessions/ses_1/sandbox/checkpoints/${checkpoint.id}/restore`)
        return new Response(
          `${JSON.stringify({ type: 'progress', phase: 'restoring 3 files' })}\n${JSON.stringify({ type: 'done', result: { checkpoint } })}\n`,
          { status: 200 },
        );
      if (route === 'POST /api/sandboxes/sbx_1/stop' || route === 'POST /api/sandboxes/sbx_1/start')
        return answer({
          id: 'sbx_1',
          environmentId: 'env_1',
          environmentRevisionId: 'rev_2',
          imageId: null,
          provider: 'fake',
          desiredStatus: path.endsWith('stop') ? 'stopped' : 'ready',
          status: 'running',
          failureReason: null,
          sessionId: null,
          durability: 'none',
          generation: 4,
          source: 'cold',
          forkedFromId: null,
          logicalId: null,
          lastActivityAt: at,
          createdAt: at,
          updatedAt: at,
        });
      if (route === 'PATCH /api/keys/key_1')
        return answer({
          key: {
            id: 'key_1',
            name: 'ci',
            role: 'agent',
            prefix: 'sc_',
            createdAt: at,
            lastUsedAt: null,
            revokedAt: null,
            allowedAgentIds: body.allowedAgentIds,
          },
        });
      return new Response(JSON.stringify({ error: { code: 'not_found', message: `no route ${route}` } }), { status: 404 });
    });
  });

  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });

  const run = (...argv: string[]) => buildProgram({ SANDCAST_URL: 'http://sandcast.test' }).parseAsync(argv, { from: 'user' });
  const writes = () => sent.filter((s) => s.method !== 'GET');

  it('agent create: "use latest" writes the exact current revision id; @N the numbered one', async () => {
    await run(
      'agent',
      'create',
      'coder',
      '--mode',
      'selectable',
      '--bind',
      'scratch=dev',
      '--bind',
      'old=env_1@1',
      '--default',
      'scratch',
      '--fleet',
    );
    expect(writes()).toEqual([
      {
        method: 'POST',
        path: '/api/agents',
        body: {
          name: 'coder',
          sandboxPolicy: {
            mode: 'selectable',
            default: 'scratch',
            bindings: { scratch: { environmentRevisionId: 'rev_2' }, old: { environmentRevisionId: 'rev_1' } },
          },
          capabilities: ['sandbox_fleet'],
        },
      },
    ]);
    expect(out).toContain('created agent coder (version 1)');
    expect(out).toMatch(/old +dev rev 1 \(current is 2\)/);
  });

  it('agent update: moves a binding to the current revision and prints what changed and the new version', async () => {
    await run('agent', 'update', 'coder', '--bind', 'main=dev', '--display-name', 'Coder');
    expect(writes()).toEqual([
      {
        method: 'PATCH',
        path: '/api/agents/agt_1',
        body: {
          displayName: 'Coder',
          sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: 'rev_2' } } },
        },
      },
    ]);
    expect(out).toContain('~ main: dev rev 1 (current is 2) → dev rev 2 (current)');
    expect(out).toContain('version 1 → 2');
  });

  it('agent update that changes nothing sends nothing; one without flags is a usage mistake', async () => {
    await run('agent', 'update', 'coder', '--bind', 'main=dev@1', '--no-fleet');
    expect(writes()).toEqual([]);
    expect(out).toContain('coder already says that: nothing changed (version 1)');
    await expect(run('agent', 'update', 'coder')).rejects.toThrow(UsageError);
  });

  it('session start sends the agent id and the binding --use names', async () => {
    await run('session', 'start', 'coder', '--use', 'main');
    expect(writes()).toEqual([{ method: 'POST', path: '/api/sessions', body: { agentId: 'agt_1', sandbox: { use: 'main' } } }]);
    expect(out).toContain('sandcast session exec ses_1 -- CMD');
  });

  it('session exec runs in the session’s sandbox and exits with the command’s code', async () => {
    await run('session', 'exec', 'ses_1', '--', 'sh', '-c', 'exit 5');
    expect(writes()).toEqual([{ method: 'POST', path: '/api/sessions/ses_1/exec', body: { command: ['sh', '-c', 'exit 5'] } }]);
    expect(process.exitCode).toBe(5);
  });

  it('session exec says on stderr when the compute was replaced first', async () => {
    let err = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err += String(chunk);
      return true;
    });
    await run('session', 'exec', 'ses_2', '--', 'true');
    expect(err).toContain('compute was lost and replaced (generation 1 → 2, its workspace restored from checkpoint ckp_1)');
    expect(process.exitCode).toBe(0);
  });

  it('session checkpoint, checkpoints and restore', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await run('session', 'checkpoints', 'ses_1');
    expect(out).toContain(checkpoint.id);
    expect(out).toContain('1.5 KiB');
    expect(out).toContain('current');
    await run('session', 'checkpoint', 'ses_1');
    expect(out).toContain('2 changed paths, 1.5 KiB stored');
    await run('session', 'restore', 'ses_1', checkpoint.id);
    expect(out).toContain(`workspace restored to checkpoint ${checkpoint.id}`);
    expect(writes().map((w) => w.path)).toEqual([
      '/api/sessions/ses_1/sandbox/checkpoints',
      `/api/sessions/ses_1/sandbox/checkpoints/${checkpoint.id}/restore`,
    ]);
  });

  it('sandbox stop and start ask for the state and show desired against observed', async () => {
    await run('sandbox', 'stop', 'sbx_1');
    await run('sandbox', 'start', 'sbx_1');
    expect(writes().map((w) => `${w.method} ${w.path}`)).toEqual(['POST /api/sandboxes/sbx_1/stop', 'POST /api/sandboxes/sbx_1/start']);
    expect(out).toContain('status:        running, desired stopped (being stopped)');
    expect(out).toContain('status:        running (desired ready)');
    expect(out).toContain('generation:    4');
  });

  it('keys allow-agents sends agent ids; --none sends none', async () => {
    await run('keys', 'allow-agents', 'key_1', 'coder');
    await run('keys', 'allow-agents', 'key_1', '--none');
    expect(writes()).toEqual([
      { method: 'PATCH', path: '/api/keys/key_1', body: { allowedAgentIds: ['agt_1'] } },
      { method: 'PATCH', path: '/api/keys/key_1', body: { allowedAgentIds: [] } },
    ]);
    expect(out).toContain('key key_1 (ci) may start sessions for: coder');
    expect(out).toContain('key key_1 (ci) may start sessions for: none');
    await expect(run('keys', 'allow-agents', 'key_1')).rejects.toThrow(UsageError);
    await expect(run('keys', 'allow-agents', 'key_1', 'coder', '--none')).rejects.toThrow(UsageError);
  });
});
