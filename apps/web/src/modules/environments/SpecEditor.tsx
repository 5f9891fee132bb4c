import type { EnvironmentBody, SandboxSpecInput } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ArrowDown, ArrowUp, Plus, Save, Trash2 } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { fieldErrors } from '../../api/errors.ts';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { FieldError, INPUT_CLASS, LABEL_CLASS, LabelledField } from '../../components/Field.tsx';
import { Section } from '../../components/Section.tsx';
import { ErrorState } from '../../components/States.tsx';
import { NetworkPolicy } from './NetworkPolicy.tsx';
import { DURABILITY_OPTIONS } from './spec-words.ts';

type Spec = EnvironmentBody['spec'];
type IdleAction = Spec['lifecycle']['idleAction'];

const IDLE_ACTION_WORDS: Record<IdleAction, string> = {
  stop: 'Stop it (the disk is kept)',
  keep_running: 'Keep it running',
  checkpoint_and_stop: 'Checkpoint, then stop',
};

/** Bootstrap commands: one shell command a line item, run in order on every (re)boot. */
function BootstrapList({
  commands,
  onChange,
  errors,
}: {
  commands: string[];
  onChange: (next: string[]) => void;
  errors: Record<string, string>;
}) {
  const id = useId();
  const move = (from: number, to: number) => {
    const next = [...commands];
    const [item] = next.splice(from, 1);
    next.splice(to, 0, item!);
    onChange(next);
  };
  return (
    <fieldset className="space-y-2">
      <legend className={LABEL_CLASS}>Bootstrap commands</legend>
      <p className="text-xs text-zinc-400">
        Shell commands run in order when a sandbox is created and whenever its compute is replaced. Keep credentials out of them: they are
        stored in every revision.
      </p>
      {commands.length === 0 ? <p className="text-sm text-zinc-400">None.</p> : null}
      <ol className="space-y-2">
        {commands.map((command, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the position is the command's identity here
          <li key={index}>
            <div className="flex items-center gap-1.5">
              <label htmlFor={`${id}-${index}`} className="w-6 shrink-0 text-right font-mono text-xs text-zinc-400">
                <span className="sr-only">Bootstrap command </span>
                {index + 1}
              </label>
              <input
                id={`${id}-${index}`}
                value={command}
                spellCheck={false}
                onChange={(e) => onChange(commands.map((c, i) => (i === index ? e.target.value : c)))}
                className={`${INPUT_CLASS} font-mono`}
                aria-invalid={errors[`bootstrap.${index}`] ? true : undefined}
                aria-describedby={errors[`bootstrap.${index}`] ? `${id}-${index}-error` : undefined}
              />
              <Button
                size="sm"
                variant="ghost"
                aria-label={`Move command ${index + 1} up`}
                disabled={index === 0}
                onClick={() => move(index, index - 1)}
              >
                <ArrowUp aria-hidden className="size-3.5" />
              </Button>
              <Button
                size="sm"
                variant="ghost"
                aria-label={`Move command ${index + 1} down`}
                disabled={index === commands.length - 1}
                onClick={() => move(index, index + 1)}
              >
                <ArrowDown aria-hidden className="size-3.5" />
              </Button>
              <Button
                size="sm"
                variant="ghost"
                aria-label={`Remove command ${index + 1}`}
                onClick={() => onChange(commands.filter((_, i) => i !== index))}
              >
                <Trash2 aria-hidden className="size-3.5" />
              </Button>
            </div>
            <FieldError id={`${id}-${index}-error`} testId={`spec.bootstrap.${index}`} message={errors[`bootstrap.${index}`]} />
          </li>
        ))}
      </ol>
      <FieldError id={`${id}-error`} testId="spec.bootstrap" message={errors.bootstrap} />
      <Button size="sm" onClick={() => onChange([...commands, ''])} icon={<Plus aria-hidden className="size-3.5" />}>
        Add command
      </Button>
    </fieldset>
  );
}

/**
 * What the environment says about its sandboxes beside the provider config: words, durability,
 * idle lifecycle, bootstrap commands, the network policy. Saving makes a new revision.
 */
export function SpecEditor({ environment }: { environment: EnvironmentBody }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const id = useId();
  const [spec, setSpec] = useState<Spec>(environment.spec);
  const [dirty, setDirty] = useState(false);
  const save = useMutation({
    mutationFn: () => {
      const body: SandboxSpecInput = {
        displayName: spec.displayName?.trim() || null,
        description: spec.description?.trim() || null,
        durability: spec.durability,
        lifecycle: spec.lifecycle,
        bootstrap: spec.bootstrap,
        containment: { network: spec.containment.network, hosts: spec.containment.hosts },
      };
      return client.environments.update(environment.id, { spec: body });
    },
    onSuccess: (answer) => {
      setDirty(false);
      void queryClient.invalidateQueries({ queryKey: queryKeys.environments });
      toast.success(`Saved as revision #${answer.currentRevision.number}`);
    },
  });
  const change = (next: Spec) => {
    setSpec(next);
    setDirty(true);
    if (save.isError) save.reset();
  };
  const errors = save.isError ? fieldErrors(save.error, 'spec') : {};
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="Sandbox spec" noValidate>
      <Section
        id="sandbox-spec"
        title="Sandbox spec"
        description="How this environment's sandboxes behave. Saving a change inserts a new revision; sessions keep the revision they pinned."
        actions={
          <Button type="submit" variant="primary" disabled={!dirty || save.isPending} icon={<Save aria-hidden className="size-4" />}>
            {save.isPending ? 'Saving…' : 'Save spec'}
          </Button>
        }
      >
        <div className="space-y-5">
          <div className="grid gap-4 sm:grid-cols-2">
            <LabelledField htmlFor={`${id}-display`} label="Display name">
              <input
                id={`${id}-display`}
                value={spec.displayName ?? ''}
                onChange={(e) => change({ ...spec, displayName: e.target.value })}
                className={INPUT_CLASS}
              />
              <FieldError id={`${id}-display-error`} testId="spec.displayName" message={errors.displayName} />
            </LabelledField>
            <LabelledField htmlFor={`${id}-durability`} label="Durability">
              <select
                id={`${id}-durability`}
                value={spec.durability}
                onChange={(e) => change({ ...spec, durability: e.target.value as Spec['durability'] })}
                className={INPUT_CLASS}
              >
                {DURABILITY_OPTIONS.map(([value, words]) => (
                  <option key={value} value={value}>
                    {words}
                  </option>
                ))}
              </select>
              <FieldError id={`${id}-durability-error`} testId="spec.durability" message={errors.durability} />
            </LabelledField>
            <LabelledField htmlFor={`${id}-description`} label="Description" className="sm:col-span-2">
              <textarea
                id={`${id}-description`}
                rows={2}
                value={spec.description ?? ''}
                onChange={(e) => change({ ...spec, description: e.target.value })}
                className={INPUT_CLASS}
              />
              <FieldError id={`${id}-description-error`} testId="spec.description" message={errors.description} />
            </LabelledField>
            <LabelledField htmlFor={`${id}-idle-after`} label="Idle after (seconds)">
              <input
                id={`${id}-idle-after`}
                type="number"
                min={10}
                step={1}
                value={Number.isNaN(spec.lifecycle.idleAfterSeconds) ? '' : spec.lifecycle.idleAfterSeconds}
                onChange={(e) => change({ ...spec, lifecycle: { ...spec.lifecycle, idleAfterSeconds: e.target.valueAsNumber } })}
                className={INPUT_CLASS}
                aria-invalid={errors['lifecycle.idleAfterSeconds'] ? true : undefined}
                aria-describedby={`${id}-idle-after-hint`}
              />
              <p id={`${id}-idle-after-hint`} className="text-xs text-zinc-400">
                Time without an operation through Sandcast before the idle action applies.
              </p>
              <FieldError
                id={`${id}-idle-after-error`}
                testId="spec.lifecycle.idleAfterSeconds"
                message={errors['lifecycle.idleAfterSeconds']}
              />
            </LabelledField>
            <LabelledField htmlFor={`${id}-idle-action`} label="When idle">
              <select
                id={`${id}-idle-action`}
                value={spec.lifecycle.idleAction}
                onChange={(e) => change({ ...spec, lifecycle: { ...spec.lifecycle, idleAction: e.target.value as IdleAction } })}
                className={INPUT_CLASS}
              >
                {(Object.entries(IDLE_ACTION_WORDS) as [IdleAction, string][]).map(([value, words]) => (
                  <option key={value} value={value}>
                    {words}
                  </option>
                ))}
              </select>
              <FieldError id={`${id}-idle-action-error`} testId="spec.lifecycle.idleAction" message={errors['lifecycle.idleAction']} />
            </LabelledField>
          </div>
          <BootstrapList commands={spec.bootstrap} onChange={(bootstrap) => change({ ...spec, bootstrap })} errors={errors} />
          <NetworkPolicy
            id={id}
            containment={spec.containment}
            onChange={(containment) => change({ ...spec, containment })}
            errors={errors}
          />
          {save.isError && Object.keys(errors).length === 0 ? <ErrorState title="Not saved" error={save.error} /> : null}
        </div>
      </Section>
    </form>
  );
}
