import type { EnvironmentBody } from '@sandcast/contracts';
import { useState } from 'react';
import { FieldError, INPUT_CLASS, LABEL_CLASS } from '../../components/Field.tsx';

type Containment = EnvironmentBody['spec']['containment'];

const CHOICES: Array<{ network: Containment['network']; label: string; help: string }> = [
  { network: 'deny', label: 'Deny: no route out', help: 'Sandboxes reach nothing outside themselves.' },
  {
    network: 'allowlist',
    label: 'Allowlist of hosts',
    help: 'Only the hosts below, through the egress proxy. *.example.com covers the names below example.com, not example.com itself.',
  },
  {
    network: 'allow',
    label: 'Allow: any public host',
    help: 'Any public host through the egress proxy; private and metadata addresses stay refused.',
  },
];

/** One host pattern a line; blank lines dropped. */
const hostsOf = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/**
 * The environment's egress policy: deny, an allowlist of hosts, or allow. Anything but deny goes
 * out through the host-side egress proxy (README → Security → Egress), which never reaches
 * loopback, private or metadata addresses.
 */
export function NetworkPolicy({
  id,
  containment,
  onChange,
  errors,
}: {
  id: string;
  containment: Containment;
  onChange: (next: Containment) => void;
  errors: Record<string, string>;
}) {
  const [text, setText] = useState(containment.hosts.join('\n'));
  const hostErrors = Object.entries(errors).filter(([path]) => path.startsWith('containment.hosts'));
  return (
    <fieldset className="space-y-2">
      <legend className={LABEL_CLASS}>Network</legend>
      {CHOICES.map((choice) => (
        <div key={choice.network}>
          <label className="flex items-center gap-2 text-sm text-zinc-200">
            <input
              type="radio"
              name={`${id}-network`}
              checked={containment.network === choice.network}
              onChange={() => onChange({ network: choice.network, hosts: choice.network === 'allowlist' ? hostsOf(text) : [] })}
              aria-describedby={`${id}-network-${choice.network}`}
              className="accent-teal-500"
            />
            {choice.label}
          </label>
          <p id={`${id}-network-${choice.network}`} className="ml-6 text-xs text-zinc-400">
            {choice.help}
          </p>
        </div>
      ))}
      {containment.network === 'allowlist' ? (
        <div className="ml-6">
          <label htmlFor={`${id}-hosts`} className={LABEL_CLASS}>
            Allowed hosts (one a line)
          </label>
          <textarea
            id={`${id}-hosts`}
            rows={4}
            value={text}
            placeholder={'registry.npmjs.org\n*.github.com'}
            onChange={(event) => {
              setText(event.target.value);
              onChange({ network: 'allowlist', hosts: hostsOf(event.target.value) });
            }}
            className={`${INPUT_CLASS} font-mono`}
            aria-describedby={`${id}-hosts-error`}
          />
          <FieldError id={`${id}-hosts-error`} testId="spec.containment.hosts" message={hostErrors[0]?.[1]} />
        </div>
      ) : null}
      <FieldError id={`${id}-network-error`} testId="spec.containment.network" message={errors['containment.network']} />
    </fieldset>
  );
}
