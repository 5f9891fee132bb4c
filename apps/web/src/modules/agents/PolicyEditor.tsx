import { Plus } from 'lucide-react';
import { useId } from 'react';
import { Button } from '../../components/Button.tsx';
import { FieldError, INPUT_CLASS, LABEL_CLASS, LabelledField } from '../../components/Field.tsx';
import { EmptyState, ErrorState, Skeleton } from '../../components/States.tsx';
import { BindingEditor } from './BindingEditor.tsx';
import { activeBindings, type BindingDraft, emptyBinding, type PolicyDraft, type PolicyMode } from './policy-draft.ts';
import type { RevisionCatalog } from './revision-catalog.ts';

/** Each mode in one sentence, in the order an operator weighs them. */
export const MODE_WORDS: Record<PolicyMode, { label: string; sentence: string }> = {
  fixed: { label: 'Fixed', sentence: 'Every session gets the single configured sandbox; session overrides are rejected.' },
  selectable: {
    label: 'Selectable',
    sentence: "A session may pick one of the agent's declared bindings by name; without a pick it gets the default.",
  },
  configurable: {
    label: 'Configurable',
    sentence: 'Like selectable, and a session may also submit a constrained one-off configuration over a binding.',
  },
  none: { label: 'No sandbox', sentence: 'The agent has no primary sandbox: its sessions start without one.' },
};

const MODES = Object.keys(MODE_WORDS) as PolicyMode[];

/** The first message at `path` or under it (`bindings.build.environmentRevisionId` counts for `bindings.build`). */
function errorAt(errors: Record<string, string>, path: string): string | undefined {
  if (errors[path]) return errors[path];
  const key = Object.keys(errors).find((k) => k.startsWith(`${path}.`));
  return key ? errors[key] : undefined;
}

/**
 * An agent's sandbox policy: the mode, its bindings (each an exact environment revision), the
 * default. `errors` are the API's messages relative to `sandboxPolicy` ("default", "bindings.build").
 */
export function PolicyEditor({
  draft,
  onChange,
  catalog,
  errors,
}: {
  draft: PolicyDraft;
  onChange: (next: PolicyDraft) => void;
  catalog: RevisionCatalog;
  errors: Record<string, string>;
}) {
  const id = useId();
  const shown = activeBindings(draft);
  const setBinding = (key: string, next: BindingDraft) => {
    const previous = draft.bindings.find((b) => b.key === key);
    onChange({
      ...draft,
      bindings: draft.bindings.map((b) => (b.key === key ? next : b)),
      // A renamed default stays the default.
      defaultName: previous && previous.name === draft.defaultName ? next.name : draft.defaultName,
    });
  };
  const addBinding = () => {
    const taken = new Set(draft.bindings.map((b) => b.name));
    let n = draft.bindings.length + 1;
    while (taken.has(n === 1 ? 'default' : `binding-${n}`)) n += 1;
    const binding = emptyBinding(catalog, n === 1 ? 'default' : `binding-${n}`);
    onChange({ ...draft, bindings: [...draft.bindings, binding], defaultName: draft.defaultName || binding.name });
  };
  const setMode = (mode: PolicyMode) => {
    const needsOne = mode !== 'none' && draft.bindings.length === 0 && catalog.environments.length > 0;
    const bindings = needsOne ? [emptyBinding(catalog, 'default')] : draft.bindings;
    onChange({ ...draft, mode, bindings, defaultName: draft.defaultName || bindings[0]?.name || '' });
  };
  const modeError = errors.mode;
  return (
    <div className="space-y-4">
      <fieldset className="space-y-2" aria-describedby={modeError ? `${id}-mode-error` : undefined}>
        <legend className={LABEL_CLASS}>Sandbox policy</legend>
        <div className="grid gap-2 sm:grid-cols-2">
          {MODES.map((mode) => (
            <label
              key={mode}
              className={`flex cursor-pointer items-start gap-2 rounded-md border p-3 text-sm ${draft.mode === mode ? 'border-teal-600 bg-teal-950/30' : 'border-zinc-800 hover:border-zinc-700'}`}
            >
              <input
                type="radio"
                name={`${id}-mode`}
                value={mode}
                checked={draft.mode === mode}
                onChange={() => setMode(mode)}
                className="mt-0.5 accent-teal-500"
                aria-describedby={`${id}-${mode}-sentence`}
              />
              <span>
                <span className="font-medium text-zinc-50">{MODE_WORDS[mode].label}</span>
                <span id={`${id}-${mode}-sentence`} className="mt-0.5 block text-zinc-400">
                  {MODE_WORDS[mode].sentence}
                </span>
              </span>
            </label>
          ))}
        </div>
        <FieldError id={`${id}-mode-error`} testId="sandboxPolicy.mode" message={modeError} />
      </fieldset>
      {draft.mode === 'none' ? (
        <FieldError id={`${id}-bindings-error`} testId="sandboxPolicy.bindings" message={errors.bindings} />
      ) : catalog.isPending ? (
        <Skeleton lines={2} label="Loading environments" />
      ) : catalog.error ? (
        <ErrorState error={catalog.error} onRetry={catalog.refetch} title="Could not load the environments to bind" />
      ) : catalog.environments.length === 0 ? (
        <>
          <EmptyState message="No environments yet — a binding pins an environment revision. Create an environment first." />
          <FieldError id={`${id}-bindings-error`} testId="sandboxPolicy.bindings" message={errors.bindings} />
        </>
      ) : (
        <div className="space-y-3">
          <h3 className="text-sm font-medium text-zinc-100">{draft.mode === 'fixed' ? 'Sandbox' : 'Bindings'}</h3>
          {shown.map((binding) => (
            <BindingEditor
              key={binding.key}
              binding={binding}
              catalog={catalog}
              onChange={(next) => setBinding(binding.key, next)}
              onRemove={
                draft.mode === 'fixed' || shown.length === 1
                  ? undefined
                  : () =>
                      onChange({
                        ...draft,
                        bindings: draft.bindings.filter((b) => b.key !== binding.key),
                        defaultName:
                          draft.defaultName === binding.name
                            ? (draft.bindings.find((b) => b.key !== binding.key)?.name ?? '')
                            : draft.defaultName,
                      })
              }
              error={errorAt(errors, `bindings.${binding.name}`)}
            />
          ))}
          <FieldError id={`${id}-bindings-error`} testId="sandboxPolicy.bindings" message={errors.bindings} />
          {draft.mode !== 'fixed' ? (
            <div className="flex flex-wrap items-end gap-4">
              <Button size="sm" onClick={addBinding} icon={<Plus aria-hidden className="size-3.5" />}>
                Add binding
              </Button>
              <LabelledField htmlFor={`${id}-default`} label="Default binding">
                <select
                  id={`${id}-default`}
                  value={draft.defaultName}
                  onChange={(e) => onChange({ ...draft, defaultName: e.target.value })}
                  className={INPUT_CLASS}
                  aria-describedby={errors.default ? `${id}-default-error` : undefined}
                  aria-invalid={errors.default ? true : undefined}
                >
                  {shown.some((b) => b.name === draft.defaultName) ? null : <option value={draft.defaultName}>Choose one</option>}
                  {shown.map((b) => (
                    <option key={b.key} value={b.name}>
                      {b.name}
                    </option>
                  ))}
                </select>
              </LabelledField>
            </div>
          ) : null}
          {draft.mode !== 'fixed' || errors.default ? (
            <FieldError id={`${id}-default-error`} testId="sandboxPolicy.default" message={errors.default} />
          ) : null}
        </div>
      )}
    </div>
  );
}
