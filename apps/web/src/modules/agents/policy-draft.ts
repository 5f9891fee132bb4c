import type { AgentVersionBody, SandboxPolicyBody } from '@sandcast/contracts';
import type { RevisionCatalog } from './revision-catalog.ts';

export type PolicyMode = SandboxPolicyBody['mode'];
export type Durability = NonNullable<AgentVersionBody['sandboxPolicy']['bindings'][string]['durability']>;

/** One binding as the editor holds it: its environment too, so the revision picker can list its revisions. */
export interface BindingDraft {
  /** Stable across renames (React key). */
  key: string;
  name: string;
  environmentId: string;
  revisionId: string;
  /** Empty: the revision's own durability. */
  durability: Durability | '';
}

export interface PolicyDraft {
  mode: PolicyMode;
  defaultName: string;
  /** Every binding typed so far; mode `fixed` uses (and shows) only the first. */
  bindings: BindingDraft[];
}

let nextKey = 0;
const newBindingKey = () => `binding-${++nextKey}`;

export function emptyBinding(catalog: RevisionCatalog, name: string): BindingDraft {
  const environment = catalog.environments[0];
  return {
    key: newBindingKey(),
    name,
    environmentId: environment?.id ?? '',
    revisionId: environment?.currentRevision.id ?? '',
    durability: '',
  };
}

export function draftFromPolicy(policy: AgentVersionBody['sandboxPolicy'], catalog: RevisionCatalog): PolicyDraft {
  return {
    mode: policy.mode,
    defaultName: policy.default ?? '',
    bindings: Object.entries(policy.bindings).map(([name, binding]) => ({
      key: newBindingKey(),
      name,
      environmentId: catalog.find(binding.environmentRevisionId)?.environment.id ?? '',
      revisionId: binding.environmentRevisionId,
      durability: binding.durability ?? '',
    })),
  };
}

/** The bindings the mode uses: none for `none`, the first for `fixed`, all otherwise. */
export function activeBindings(draft: PolicyDraft): BindingDraft[] {
  if (draft.mode === 'none') return [];
  if (draft.mode === 'fixed') return draft.bindings.slice(0, 1);
  return draft.bindings;
}

/** The policy as the API takes it. The server checks it; the editor does not second-guess it. */
export function policyBody(draft: PolicyDraft): SandboxPolicyBody {
  const bindings = activeBindings(draft);
  const defaultName = draft.mode === 'none' ? null : draft.mode === 'fixed' ? (bindings[0]?.name ?? null) : draft.defaultName || null;
  return {
    mode: draft.mode,
    default: defaultName,
    bindings: Object.fromEntries(
      bindings.map((b) => [b.name, { environmentRevisionId: b.revisionId, ...(b.durability ? { durability: b.durability } : {}) }]),
    ),
  };
}
