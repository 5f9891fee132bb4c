import { AlertTriangle } from 'lucide-react';
import { useAuthSession, useSettings } from '../../api/queries.ts';

/**
 * Shown under an environment's config while it asks for `network: host`: what that gives sandbox
 * code, and whether this instance will accept it (never in local_trusted mode; otherwise only with
 * Settings → Security → Allow host network).
 */
export function HostNetworkWarning({ config }: { config: Record<string, unknown> }) {
  const session = useAuthSession();
  const settings = useSettings();
  if (config.network !== 'host') return null;
  const localTrusted = session.data?.deploymentMode === 'local_trusted';
  const allowed = settings.data?.security.allowHostNetwork === true;
  return (
    <div role="alert" data-testid="host-network-warning" className="mt-3 rounded-md border border-amber-800 bg-amber-950/50 p-2.5 text-sm">
      <p className="flex items-center gap-1.5 font-medium text-amber-200">
        <AlertTriangle aria-hidden className="size-4" /> Host network
      </p>
      <p className="mt-1 text-amber-100">
        Sandbox code would share this machine's network stack: every service listening on it, this server's API and databases included.
      </p>
      <p className="mt-1 text-amber-100/90">
        {localTrusted
          ? 'This server runs in local_trusted mode, where that would hand sandboxes the admin API, so it refuses host networking. Choose "none".'
          : allowed
            ? 'This instance allows it (Settings → Security → Allow host network). Use it only for sandboxes you trust like the host.'
            : 'This instance does not allow it: an admin must turn on Settings → Security → Allow host network first. Choose "none" otherwise.'}
      </p>
      <p className="mt-1 text-amber-100/90">
        To let sandboxes reach the internet without this, keep "none" and set Network in the sandbox spec to an allowlist or allow: traffic
        then leaves through the egress proxy, which never reaches this machine's own services.
      </p>
    </div>
  );
}
