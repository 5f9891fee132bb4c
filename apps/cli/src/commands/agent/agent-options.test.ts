import { SandcastClient } from '@sandcast/client';
import { DEFAULT_SANDBOX_SPEC } from '@sandcast/contracts';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../format.ts';
import { applyPolicyChanges, type PolicyChanges, parseBind, parseDurabilityOf, resolveBindings, samePolicy } from './agent-options.ts';

const changes = (over: Partial<PolicyChanges> = {}): PolicyChanges => ({ bindings: new Map(), unbind: [], durabilityOf: [], ...over });

describe('--bind', () => {
  it.each([
    ['build=dev', { name: 'build', environment: 'dev' }],
    ['build=dev@3', { name: 'build', environment: 'dev', revision: 3 }],
    ['build=env_1@rev_2', { name: 'build', environment: 'env_1', revision: 'rev_2' }],
  ])('%s', (raw, expected) => {
    expect(parseBind(raw)).toEqual(expected);
  });

  it.each(['build', '=dev', 'build=', 'build=dev@', 'build=@3'])('%s is a usage mistake', (raw) => {
    expect(() => parseBind(raw)).toThrow(UsageError);
  });
});

describe('--durability-of', () => {
  it('takes a durability, or inherit to drop the override', () => {
    expect(parseDurabilityOf('build=checkpointed')).toEqual({ name: 'build', durability: 'checkpointed' });
    expect(parseDurabilityOf('build=inherit')).toEqual({ name: 'build', durability: null });
  });
  it('refuses anything else, naming the choices', () => {
    expect(() => parseDurabilityOf('build=forever')).toThrow(/NAME=none\|provider_snapshot\|checkpointed\|inherit/);
  });
});

describe('the policy the flags describe', () => {
  it('a single binding is the default; fixed and selectable alike', () => {
    expect(applyPolicyChanges(undefined, changes({ mode: 'fixed', bindings: new Map([['main', 'rev_1']]) }))).toEqual({
      mode: 'fixed',
      default: 'main',
      bindings: { main: { environmentRevisionId: 'rev_1' } },
    });
  });

  it('several bindings need --default', () => {
    const two = new Map([
      ['a', 'rev_1'],
      ['b', 'rev_2'],
    ]);
    expect(() => applyPolicyChanges(undefined, changes({ mode: 'selectable', bindings: two }))).toThrow(
      'name the default binding with --default (one of a, b)',
    );
    expect(applyPolicyChanges(undefined, changes({ mode: 'selectable', bindings: two, default: 'b' })).default).toBe('b');
  });

  it('a sandbox mode without a binding, and mode none with one, are usage mistakes', () => {
    expect(() => applyPolicyChanges(undefined, changes({ mode: 'selectable' }))).toThrow(/--bind NAME=ENV/);
    expect(() => applyPolicyChanges(undefined, changes({ mode: 'none', bindings: new Map([['a', 'rev_1']]) }))).toThrow(/--mode none/);
    expect(applyPolicyChanges(undefined, changes({ mode: 'none' }))).toEqual({ mode: 'none', default: null, bindings: {} });
  });

  it('an update re-binds, unbinds and overrides durability over the current policy, keeping what it does not name', () => {
    const current = {
      mode: 'selectable' as const,
      default: 'scratch',
      bindings: {
        scratch: { environmentRevisionId: 'rev_1' },
        build: { environmentRevisionId: 'rev_2', durability: 'checkpointed' as const },
      },
    };
    const next = applyPolicyChanges(
      current,
      changes({ bindings: new Map([['build', 'rev_3']]), unbind: ['scratch'], durabilityOf: [], default: undefined }),
    );
    // The default went with its binding; the only one left takes over. A re-bound name keeps its durability.
    expect(next).toEqual({
      mode: 'selectable',
      default: 'build',
      bindings: { build: { environmentRevisionId: 'rev_3', durability: 'checkpointed' } },
    });
    const inherit = applyPolicyChanges(current, changes({ durabilityOf: [{ name: 'build', durability: null }] }));
    expect(inherit.bindings?.build).toEqual({ environmentRevisionId: 'rev_2' });
    expect(current.bindings.build.durability).toBe('checkpointed');
    expect(() => applyPolicyChanges(current, changes({ unbind: ['nope'] }))).toThrow('--unbind nope: there is no binding named "nope"');
    expect(() => applyPolicyChanges(current, changes({ durabilityOf: [{ name: 'x', durability: 'none' }] }))).toThrow(/--bind x=ENV/);
    // Switching to none drops the bindings.
    expect(applyPolicyChanges(current, changes({ mode: 'none' }))).toEqual({ mode: 'none', default: null, bindings: {} });
  });

  it('samePolicy ignores binding order and compares durability', () => {
    const a = {
      mode: 'selectable' as const,
      default: 'x',
      bindings: { x: { environmentRevisionId: 'r1' }, y: { environmentRevisionId: 'r2' } },
    };
    expect(
      samePolicy(a, {
        mode: 'selectable',
        default: 'x',
        bindings: { y: { environmentRevisionId: 'r2' }, x: { environmentRevisionId: 'r1' } },
      }),
    ).toBe(true);
    expect(samePolicy(a, { ...a, bindings: { ...a.bindings, y: { environmentRevisionId: 'r2', durability: 'none' } } })).toBe(false);
    expect(samePolicy(a, { ...a, default: 'y' })).toBe(false);
  });
});

describe('resolving --bind against the server', () => {
  const spec = structuredClone(DEFAULT_SANDBOX_SPEC);
  const environment = {
    id: 'env_1',
    name: 'dev',
    provider: 'fake',
    config: {},
    connectionId: null,
    spec,
    currentRevision: { id: 'rev_c', number: 3, createdAt: '2026-01-01T00:00:00Z' },
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
  };
  const revision = (id: string, number: number) => ({
    id,
    number,
    createdAt: '2026-01-01T00:00:00Z',
    environmentId: 'env_1',
    provider: 'fake',
    config: {},
    spec,
  });
  const client = new SandcastClient({
    baseUrl: 'http://sandcast.test',
    fetch: async (url) => {
      const path = new URL(String(url)).pathname;
      const body =
        path === '/api/environments/env_1/revisions'
          ? { revisions: [revision('rev_c', 3), revision('rev_b', 2), revision('rev_a', 1)] }
          : { environments: [environment] };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });

  it('writes the exact revision id: the current one by default, or the one named by number or id', async () => {
    const bound = await resolveBindings(client, [parseBind('latest=dev'), parseBind('two=dev@2'), parseBind('one=env_1@rev_a')]);
    expect(Object.fromEntries(bound)).toEqual({ latest: 'rev_c', two: 'rev_b', one: 'rev_a' });
  });

  it('a revision the environment does not have, or a name bound twice, is a usage mistake', async () => {
    await expect(resolveBindings(client, [parseBind('x=dev@9')])).rejects.toThrow(
      'environment dev has no revision 9 (it has 3, 2, 1; `sandcast env revisions dev` lists them)',
    );
    await expect(resolveBindings(client, [parseBind('x=dev'), parseBind('x=dev@1')])).rejects.toThrow('--bind names "x" twice');
    await expect(resolveBindings(client, [parseBind('x=nope')])).rejects.toThrow('no environment named or with id "nope"');
  });
});
