import type { InstanceSettingsBody, InstanceSettingsPatchBody } from '@sandcast/contracts';
import { type FormEvent, useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { INPUT_CLASS, LabelledField } from '../../components/Field.tsx';

type Limits = InstanceSettingsBody['fleet'];

const FIELDS: Array<{ key: keyof Limits; label: string; hint: string; step: string }> = [
  { key: 'maxSandboxesPerSession', label: 'Resource sandboxes per session', hint: 'at once, not deleted', step: '1' },
  { key: 'maxCpusPerSession', label: 'CPUs per session', hint: 'reserved by them together', step: '0.5' },
  { key: 'maxMemoryMbPerSession', label: 'Memory per session (MiB)', hint: 'reserved by them together', step: '1' },
];

/**
 * Settings → Fleet: how many resource sandboxes (agents with `sandbox_fleet`) one session may
 * have, and the CPU and memory they may reserve together. A creation past one is refused.
 */
export function FleetLimits({
  limits,
  saving,
  onSave,
}: {
  limits: Limits;
  saving: boolean;
  onSave: (patch: InstanceSettingsPatchBody) => void;
}) {
  const [values, setValues] = useState<Record<keyof Limits, string>>({
    maxSandboxesPerSession: String(limits.maxSandboxesPerSession),
    maxCpusPerSession: String(limits.maxCpusPerSession),
    maxMemoryMbPerSession: String(limits.maxMemoryMbPerSession),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSave({
      fleet: {
        maxSandboxesPerSession: Number(values.maxSandboxesPerSession),
        maxCpusPerSession: Number(values.maxCpusPerSession),
        maxMemoryMbPerSession: Number(values.maxMemoryMbPerSession),
      },
    });
  };
  return (
    <form onSubmit={submit} className="space-y-3">
      <div className="grid gap-3 sm:grid-cols-3">
        {FIELDS.map((field) => (
          <LabelledField key={field.key} htmlFor={`fleet-${field.key}`} label={field.label}>
            <input
              id={`fleet-${field.key}`}
              type="number"
              min="0"
              step={field.step}
              required
              value={values[field.key]}
              onChange={(e) => setValues({ ...values, [field.key]: e.target.value })}
              className={INPUT_CLASS}
            />
            <p className="text-xs text-zinc-400">{field.hint}</p>
          </LabelledField>
        ))}
      </div>
      <Button type="submit" variant="primary" disabled={saving}>
        {saving ? 'Saving…' : 'Save fleet limits'}
      </Button>
    </form>
  );
}
