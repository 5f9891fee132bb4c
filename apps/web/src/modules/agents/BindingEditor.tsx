import { ArrowUpCircle, Trash2 } from 'lucide-react';
import { useId } from 'react';
import { Button } from '../../components/Button.tsx';
import { FieldError, INPUT_CLASS, LabelledField } from '../../components/Field.tsx';
import { DURABILITY_OPTIONS } from '../environments/spec-words.ts';
import type { BindingDraft, Durability } from './policy-draft.ts';
import type { RevisionCatalog } from './revision-catalog.ts';

/**
 * One binding: a name, an environment and the exact revision it pins, an optional durability.
 * A pinned revision older than the environment's current one says so, with Use latest beside it.
 */
export function BindingEditor({
  binding,
  catalog,
  onChange,
  onRemove,
  error,
}: {
  binding: BindingDraft;
  catalog: RevisionCatalog;
  onChange: (next: BindingDraft) => void;
  /** Absent when the binding cannot be removed (mode `fixed`). */
  onRemove?: () => void;
  error?: string | undefined;
}) {
  const id = useId();
  const environment = catalog.environments.find((e) => e.id === binding.environmentId);
  const revisions = catalog.revisionsOf(binding.environmentId);
  const pinned = catalog.find(binding.revisionId);
  const pinnedRevisionKnown = revisions.some((r) => r.id === binding.revisionId);
  return (
    <fieldset className="space-y-3 rounded-md border border-zinc-800 p-3" aria-label={`Binding ${binding.name || '(unnamed)'}`}>
      <div className="grid gap-3 sm:grid-cols-[10rem_1fr_12rem]">
        <LabelledField htmlFor={`${id}-name`} label="Binding name">
          <input
            id={`${id}-name`}
            value={binding.name}
            onChange={(e) => onChange({ ...binding, name: e.target.value })}
            spellCheck={false}
            className={`${INPUT_CLASS} font-mono`}
          />
        </LabelledField>
        <LabelledField htmlFor={`${id}-environment`} label="Environment">
          <select
            id={`${id}-environment`}
            value={binding.environmentId}
            onChange={(e) => {
              const next = catalog.environments.find((env) => env.id === e.target.value);
              onChange({ ...binding, environmentId: e.target.value, revisionId: next?.currentRevision.id ?? '' });
            }}
            className={INPUT_CLASS}
          >
            {binding.environmentId === '' ? <option value="">Choose an environment</option> : null}
            {catalog.environments.map((e) => (
              <option key={e.id} value={e.id}>
                {e.name}
              </option>
            ))}
          </select>
        </LabelledField>
        <LabelledField htmlFor={`${id}-revision`} label="Revision">
          <select
            id={`${id}-revision`}
            value={binding.revisionId}
            onChange={(e) => onChange({ ...binding, revisionId: e.target.value })}
            className={`${INPUT_CLASS} font-mono`}
            disabled={!environment}
          >
            {!pinnedRevisionKnown ? <option value={binding.revisionId}>{binding.revisionId || '—'}</option> : null}
            {revisions.map((r) => (
              <option key={r.id} value={r.id}>
                #{r.number}
                {r.id === environment?.currentRevision.id ? ' (latest)' : ''}
              </option>
            ))}
          </select>
        </LabelledField>
      </div>
      {pinned?.outdated ? (
        <div
          className="flex flex-wrap items-center gap-2 rounded-md border border-amber-800 bg-amber-950/40 px-3 py-2 text-sm text-amber-100"
          role="status"
        >
          <span>
            A newer revision is available: {pinned.environment.name} is at{' '}
            <span className="font-mono">#{pinned.environment.currentRevision.number}</span>, this binding pins{' '}
            <span className="font-mono">#{pinned.revision.number}</span>.
          </span>
          <Button
            size="sm"
            onClick={() => onChange({ ...binding, revisionId: pinned.environment.currentRevision.id })}
            icon={<ArrowUpCircle aria-hidden className="size-3.5" />}
          >
            Use latest
          </Button>
        </div>
      ) : null}
      <div className="flex flex-wrap items-end justify-between gap-3">
        <LabelledField htmlFor={`${id}-durability`} label="Durability">
          <select
            id={`${id}-durability`}
            value={binding.durability}
            onChange={(e) => onChange({ ...binding, durability: e.target.value as Durability | '' })}
            className={INPUT_CLASS}
          >
            <option value="">The revision's own{pinned ? ` (${pinned.revision.spec.durability})` : ''}</option>
            {DURABILITY_OPTIONS.map(([value, words]) => (
              <option key={value} value={value}>
                {words}
              </option>
            ))}
          </select>
        </LabelledField>
        {onRemove ? (
          <Button size="sm" variant="ghost" onClick={onRemove} icon={<Trash2 aria-hidden className="size-3.5" />}>
            Remove binding
          </Button>
        ) : null}
      </div>
      <FieldError id={`${id}-error`} testId={`sandboxPolicy.bindings.${binding.name}`} message={error} />
    </fieldset>
  );
}
