import type { SandboxTarget } from '@sandcast/contracts';

/** Every provider, available or not; an unavailable one says why and cannot be picked. */
export function ProviderPicker({
  targets,
  value,
  onChange,
}: {
  targets: SandboxTarget[];
  value: string;
  onChange: (provider: string) => void;
}) {
  return (
    <fieldset>
      {/* The section around it is titled Provider already; the legend names the group for screen readers. */}
      <legend className="sr-only">Provider</legend>
      <div className="grid gap-2 sm:grid-cols-2" role="radiogroup">
        {targets.map((target) => {
          const selected = value === target.provider;
          const caps = target.capabilities as { interactiveSetup?: boolean; templateCapture?: boolean };
          return (
            <label
              key={target.provider}
              className={`flex cursor-pointer items-start gap-3 rounded-md border p-3 text-sm ${
                !target.available
                  ? 'cursor-not-allowed border-zinc-800 bg-zinc-900/40'
                  : selected
                    ? 'border-teal-500 bg-teal-950/40'
                    : 'border-zinc-700 bg-zinc-900 hover:border-zinc-500'
              }`}
            >
              <input
                type="radio"
                name="provider"
                value={target.provider}
                checked={selected}
                disabled={!target.available}
                onChange={() => onChange(target.provider)}
                className="mt-1"
                aria-describedby={`provider-${target.provider}-detail`}
              />
              <span className="min-w-0">
                <span className="font-medium text-zinc-50">{target.displayName}</span>{' '}
                <span className="font-mono text-xs text-zinc-400">{target.provider}</span>
                <span id={`provider-${target.provider}-detail`} className="mt-0.5 block text-xs text-zinc-400">
                  {target.available
                    ? caps.interactiveSetup && caps.templateCapture
                      ? 'Available · custom images'
                      : 'Available'
                    : `Unavailable: ${target.unavailableReason ?? 'no reason given'}`}
                </span>
              </span>
            </label>
          );
        })}
      </div>
    </fieldset>
  );
}
