import type { EnvironmentBody } from '@sandcast/contracts';

/**
 * Said where an image is configured: with `deny` the setup sandbox has no route out, so package
 * managers cannot download anything.
 */
export function SetupNetworkNote({ containment }: { containment: EnvironmentBody['spec']['containment'] }) {
  if (containment.network !== 'deny') return null;
  return (
    <p data-testid="setup-network-note" className="mb-3 rounded-md border border-zinc-700 bg-zinc-900 p-2.5 text-sm text-zinc-300">
      Network is <span className="font-mono">deny</span>: the setup sandbox has no route out, so installing tools (apt, npm, pip) cannot
      download anything. Set Network to <span className="font-mono">allow</span>, or an allowlist of the package hosts, in the sandbox spec
      above before starting a setup session.
    </p>
  );
}
