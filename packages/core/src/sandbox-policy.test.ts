import { describe, expect, it } from 'vitest';
import { SandcastError } from './errors.ts';
import {
  inlineSpecIssues,
  type PolicyResolution,
  resolveSandboxPolicy,
  type SandboxPolicy,
  type SandboxPolicyMode,
  type SessionSandboxRequest,
  sandboxPolicyIssues,
} from './sandbox-policy.ts';

const rev = (n: number) => ({ environmentRevisionId: `rev_${n}` });

const POLICIES: Record<SandboxPolicyMode, SandboxPolicy> = {
  fixed: { mode: 'fixed', default: 'main', bindings: { main: rev(1) } },
  selectable: { mode: 'selectable', default: 'main', bindings: { main: rev(1), build: { ...rev(2), durability: 'checkpointed' } } },
  configurable: { mode: 'configurable', default: 'main', bindings: { main: rev(1), build: rev(2) } },
  none: { mode: 'none', default: null, bindings: {} },
};

const INPUTS: Record<string, SessionSandboxRequest> = {
  none: undefined,
  'use existing': { use: 'build' },
  'use unknown': { use: 'nope' },
  'use identical to the fixed binding': { use: 'main' },
  inline: { inline: { config: { cpu: 2 } } },
  'inline with unknown use': { inline: { use: 'nope' } },
};

type Expected = { resolves: PolicyResolution } | { reason: string; message?: string };

const FIXED_MESSAGE = 'this agent has a fixed sandbox; session overrides are not allowed';

/** Every mode × every input: what resolves, or why it is refused. */
const TABLE: Record<SandboxPolicyMode, Record<keyof typeof INPUTS, Expected>> = {
  fixed: {
    none: { resolves: { kind: 'binding', name: 'main', binding: rev(1) } },
    'use existing': { reason: 'fixed_policy', message: FIXED_MESSAGE },
    'use unknown': { reason: 'fixed_policy', message: FIXED_MESSAGE },
    'use identical to the fixed binding': { reason: 'fixed_policy', message: FIXED_MESSAGE },
    inline: { reason: 'fixed_policy', message: FIXED_MESSAGE },
    'inline with unknown use': { reason: 'fixed_policy', message: FIXED_MESSAGE },
  },
  selectable: {
    none: { resolves: { kind: 'binding', name: 'main', binding: rev(1) } },
    'use existing': { resolves: { kind: 'binding', name: 'build', binding: { ...rev(2), durability: 'checkpointed' } } },
    'use unknown': { reason: 'unknown_binding', message: 'this agent has no sandbox binding named "nope"; it offers main, build' },
    'use identical to the fixed binding': { resolves: { kind: 'binding', name: 'main', binding: rev(1) } },
    inline: { reason: 'inline_not_allowed' },
    'inline with unknown use': { reason: 'inline_not_allowed' },
  },
  configurable: {
    none: { resolves: { kind: 'binding', name: 'main', binding: rev(1) } },
    'use existing': { resolves: { kind: 'binding', name: 'build', binding: rev(2) } },
    'use unknown': { reason: 'unknown_binding' },
    'use identical to the fixed binding': { resolves: { kind: 'binding', name: 'main', binding: rev(1) } },
    inline: { resolves: { kind: 'inline', name: 'main', binding: rev(1), inline: { config: { cpu: 2 } } } },
    'inline with unknown use': { reason: 'unknown_binding' },
  },
  none: {
    none: { resolves: { kind: 'none' } },
    'use existing': { reason: 'no_sandbox' },
    'use unknown': { reason: 'no_sandbox' },
    'use identical to the fixed binding': { reason: 'no_sandbox' },
    inline: { reason: 'no_sandbox' },
    'inline with unknown use': { reason: 'no_sandbox' },
  },
};

describe('resolveSandboxPolicy', () => {
  for (const [mode, rows] of Object.entries(TABLE) as Array<[SandboxPolicyMode, Record<string, Expected>]>) {
    for (const [input, expected] of Object.entries(rows)) {
      it(`${mode} × ${input}`, () => {
        const run = () => resolveSandboxPolicy(POLICIES[mode], INPUTS[input]);
        if ('resolves' in expected) {
          expect(run()).toEqual(expected.resolves);
          return;
        }
        let thrown: unknown;
        try {
          run();
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(SandcastError);
        const error = thrown as SandcastError;
        expect(error.code).toBe('unprocessable');
        expect(error.details).toEqual({ reason: expected.reason });
        if (expected.message) expect(error.message).toBe(expected.message);
      });
    }
  }
});

describe('sandboxPolicyIssues', () => {
  const cases: Array<[string, SandboxPolicy, string[]]> = [
    ['fixed with one binding', POLICIES.fixed, []],
    ['selectable with two', POLICIES.selectable, []],
    ['configurable with two', POLICIES.configurable, []],
    ['none without bindings', POLICIES.none, []],
    ['fixed with two bindings', { mode: 'fixed', default: 'a', bindings: { a: rev(1), b: rev(2) } }, ['sandboxPolicy.bindings']],
    [
      'selectable without bindings',
      { mode: 'selectable', default: null, bindings: {} },
      ['sandboxPolicy.bindings', 'sandboxPolicy.default'],
    ],
    ['a default that is no binding', { mode: 'configurable', default: 'zz', bindings: { a: rev(1) } }, ['sandboxPolicy.default']],
    ['no default', { mode: 'selectable', default: null, bindings: { a: rev(1) } }, ['sandboxPolicy.default']],
    ['none with a binding', { mode: 'none', default: null, bindings: { a: rev(1) } }, ['sandboxPolicy.bindings']],
    ['none with a default', { mode: 'none', default: 'a', bindings: {} }, ['sandboxPolicy.default']],
    ['a bad binding name', { mode: 'fixed', default: 'Bad Name', bindings: { 'Bad Name': rev(1) } }, ['sandboxPolicy.bindings.Bad Name']],
    [
      'seventeen bindings',
      {
        mode: 'selectable',
        default: 'b0',
        bindings: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`b${i}`, rev(i)])),
      },
      ['sandboxPolicy.bindings'],
    ],
  ];
  for (const [name, policy, paths] of cases) {
    it(name, () => {
      expect(sandboxPolicyIssues(policy).map((i) => i.path)).toEqual(paths);
    });
  }
});

describe('inlineSpecIssues', () => {
  const allowance = { providers: ['fake'], configFields: ['cpu'] };
  it('accepts an allowed provider and field', () => {
    expect(inlineSpecIssues({ config: { cpu: 2 } }, 'fake', allowance)).toEqual([]);
  });
  it('names a provider and every field the instance does not allow', () => {
    expect(inlineSpecIssues({ config: { image: 'x', memoryMb: 1 } }, 'docker', allowance).map((i) => i.path)).toEqual([
      'sandbox.inline',
      'sandbox.inline.config.image',
      'sandbox.inline.config.memoryMb',
    ]);
  });
});
