import type { AgentBody, CreateAgentBody } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Save } from 'lucide-react';
import { type FormEvent, useEffect, useId, useState } from 'react';
import { useNavigate } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { fieldErrors } from '../../api/errors.ts';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { FieldError, INPUT_CLASS, LabelledField } from '../../components/Field.tsx';
import { Section } from '../../components/Section.tsx';
import { ErrorState } from '../../components/States.tsx';
import { Switch } from '../../components/Switch.tsx';
import { PolicyEditor } from './PolicyEditor.tsx';
import { draftFromPolicy, emptyBinding, type PolicyDraft, policyBody } from './policy-draft.ts';
import { useRevisionCatalog } from './revision-catalog.ts';

const NEW_POLICY: PolicyDraft = { mode: 'fixed', defaultName: '', bindings: [] };

/**
 * Creates an agent, or saves a new version of one: name and words, the sandbox policy, the
 * capabilities. The API's messages show at their fields.
 */
export function AgentForm({ agent }: { agent?: AgentBody }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const catalog = useRevisionCatalog();
  const id = useId();
  const [name, setName] = useState(agent?.name ?? '');
  const [displayName, setDisplayName] = useState(agent?.displayName ?? '');
  const [description, setDescription] = useState(agent?.description ?? '');
  const [fleet, setFleet] = useState(agent?.currentVersion.capabilities.includes('sandbox_fleet') ?? false);
  const [policy, setPolicy] = useState<PolicyDraft | null>(agent ? null : NEW_POLICY);
  // An existing policy names environments once the catalog knows which one each revision is of.
  useEffect(() => {
    if (policy === null && agent && !catalog.isPending) setPolicy(draftFromPolicy(agent.currentVersion.sandboxPolicy, catalog));
  }, [policy, agent, catalog]);
  // A new agent binds the first environment's latest revision once the list is there.
  useEffect(() => {
    if (!agent && policy?.mode === 'fixed' && policy.bindings.length === 0 && catalog.environments.length > 0) {
      setPolicy({ ...policy, defaultName: 'default', bindings: [emptyBinding(catalog, 'default')] });
    }
  }, [agent, policy, catalog]);

  const save = useMutation({
    mutationFn: async () => {
      const common = {
        displayName: displayName.trim() || null,
        description: description.trim() || null,
        sandboxPolicy: policyBody(policy ?? NEW_POLICY),
        capabilities: fleet ? (['sandbox_fleet'] as CreateAgentBody['capabilities']) : [],
      };
      return agent ? client.agents.update(agent.id, common) : client.agents.create({ name, ...common });
    },
    onSuccess: (saved) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.agents });
      if (agent) toast.success(`Saved as version ${saved.currentVersion.number}`);
      else {
        toast.success(`Agent ${saved.name} created`);
        navigate(`/agents/${saved.id}`);
      }
    },
  });
  const errors = save.isError ? fieldErrors(save.error) : {};
  const policyErrors = save.isError ? fieldErrors(save.error, 'sandboxPolicy') : {};
  const fieldHandled = Object.keys(errors).length > 0;
  const touch = () => {
    if (save.isError) save.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit} aria-label={agent ? 'Agent' : 'New agent'} noValidate>
      <Section
        id="agent"
        title={agent ? 'Agent settings' : 'New agent'}
        description={agent ? 'Saving inserts a new version. Sessions already started keep the version they started with.' : undefined}
        actions={
          <Button
            type="submit"
            variant="primary"
            disabled={save.isPending || policy === null}
            icon={<Save aria-hidden className="size-4" />}
          >
            {save.isPending ? 'Saving…' : agent ? 'Save' : 'Create agent'}
          </Button>
        }
      >
        <div className="space-y-5">
          <div className="grid gap-4 sm:grid-cols-2">
            {agent ? null : (
              <LabelledField htmlFor={`${id}-name`} label="Name">
                <input
                  id={`${id}-name`}
                  value={name}
                  onChange={(e) => {
                    setName(e.target.value);
                    touch();
                  }}
                  spellCheck={false}
                  placeholder="e.g. coder"
                  className={`${INPUT_CLASS} font-mono`}
                  aria-invalid={errors.name ? true : undefined}
                  aria-describedby={errors.name ? `${id}-name-error` : undefined}
                />
                <FieldError id={`${id}-name-error`} testId="name" message={errors.name} />
              </LabelledField>
            )}
            <LabelledField htmlFor={`${id}-display`} label="Display name">
              <input
                id={`${id}-display`}
                value={displayName}
                onChange={(e) => {
                  setDisplayName(e.target.value);
                  touch();
                }}
                className={INPUT_CLASS}
              />
              <FieldError id={`${id}-display-error`} testId="displayName" message={errors.displayName} />
            </LabelledField>
            <LabelledField htmlFor={`${id}-description`} label="Description" className="sm:col-span-2">
              <textarea
                id={`${id}-description`}
                value={description}
                rows={2}
                onChange={(e) => {
                  setDescription(e.target.value);
                  touch();
                }}
                className={INPUT_CLASS}
              />
              <FieldError id={`${id}-description-error`} testId="description" message={errors.description} />
            </LabelledField>
          </div>
          {policy ? (
            <PolicyEditor
              draft={policy}
              onChange={(next) => {
                setPolicy(next);
                touch();
              }}
              catalog={catalog}
              errors={policyErrors}
            />
          ) : null}
          <div className="border-t border-zinc-800">
            <Switch
              label="Sandbox fleet"
              description="Lets the agent create and address resource sandboxes beside its primary one. Its ordinary shell and file tools still run in the primary sandbox."
              checked={fleet}
              onChange={(next) => {
                setFleet(next);
                touch();
              }}
            />
          </div>
          {save.isError && !fieldHandled ? <ErrorState title="Not saved" error={save.error} /> : null}
          {save.isError && fieldHandled ? (
            <p role="alert" className="text-sm text-red-300">
              Not saved: fix the fields marked above.
            </p>
          ) : null}
        </div>
      </Section>
    </form>
  );
}
