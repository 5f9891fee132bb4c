import type { InstanceSettingsPatchBody } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { useClient } from '../api/client-context.tsx';
import { errorMessage } from '../api/errors.ts';
import { useAuthSession, useSettings } from '../api/queries.ts';
import { queryKeys } from '../api/query-keys.ts';
import { Section } from '../components/Section.tsx';
import { ErrorState, Skeleton } from '../components/States.tsx';
import { Switch } from '../components/Switch.tsx';
import { FleetLimits } from '../modules/settings/FleetLimits.tsx';

/** Settings → Instance settings → Experimental, Security and Fleet. */
export function SettingsPage() {
  const client = useClient();
  const queryClient = useQueryClient();
  const settings = useSettings();
  const session = useAuthSession();
  const localTrusted = session.data?.deploymentMode === 'local_trusted';
  const update = useMutation({
    mutationFn: (patch: InstanceSettingsPatchBody) => client.settings.update(patch),
    onSuccess: (next) => {
      queryClient.setQueryData(queryKeys.settings, next);
      void queryClient.invalidateQueries({ queryKey: queryKeys.environments });
      toast.success('Instance settings saved.');
    },
    onError: (error) => toast.error(errorMessage(error)),
  });

  return (
    <div className="space-y-6">
      <div>
        <p className="text-sm text-zinc-400">Settings</p>
        <h1 className="text-xl font-semibold text-white">Instance settings</h1>
        {settings.data?.experimental.enableEnvironments ? (
          <p className="mt-1 text-sm">
            <Link to="/settings/connections" className="text-teal-300 underline">
              Connections
            </Link>{' '}
            <span className="text-zinc-400">— credentials for providers such as Daytona</span>
          </p>
        ) : null}
      </div>
      <Section id="experimental" title="Experimental" description="Features that are still changing. Each is off until you turn it on.">
        {settings.isPending ? (
          <Skeleton lines={4} />
        ) : settings.isError ? (
          <ErrorState error={settings.error} onRetry={() => settings.refetch()} />
        ) : (
          <div className="divide-y divide-zinc-800">
            <Switch
              label="Enable Environments"
              description="Show environment management, custom images and sandboxes in Sandcast, and allow sandboxes and agents to be assigned an environment."
              checked={settings.data.experimental.enableEnvironments}
              disabled={update.isPending}
              onChange={(enableEnvironments) => update.mutate({ experimental: { enableEnvironments } })}
            />
            <Switch
              label="Enable sandbox duplex bridge"
              description="Let processes inside a sandbox reach the Sandcast API over one duplex stream when the provider supports it. Off: the file bridge is used. This is the kill switch for the duplex transport."
              checked={settings.data.experimental.enableSandboxDuplexBridge}
              disabled={update.isPending}
              onChange={(enableSandboxDuplexBridge) => update.mutate({ experimental: { enableSandboxDuplexBridge } })}
            />
          </div>
        )}
      </Section>
      <Section id="security" title="Security" description="What sandboxes may reach on this machine.">
        {settings.isPending ? (
          <Skeleton lines={2} />
        ) : settings.isError ? null : (
          <div className="divide-y divide-zinc-800">
            <Switch
              label="Allow host network"
              description={
                localTrusted
                  ? 'Unavailable in local_trusted mode: a sandbox on the host network could call this server as the operator. Environments here use network "none".'
                  : 'Let environments use network "host": sandbox code then shares this machine\'s network stack, reaching every service listening on it, this server included. Off by default.'
              }
              checked={settings.data.security.allowHostNetwork && !localTrusted}
              disabled={update.isPending || localTrusted}
              onChange={(allowHostNetwork) => update.mutate({ security: { allowHostNetwork } })}
            />
            {settings.data.security.allowHostNetwork && !localTrusted ? (
              <p role="alert" data-testid="host-network-allowed" className="py-2 text-sm text-amber-200">
                Host networking is allowed: any environment set to network "host" gives its sandboxes this machine's network.
              </p>
            ) : null}
            <Switch
              label="Allow public ports"
              description='Let sandbox ports be opened "public": their URL then answers anyone who can reach this server, with no token or key. Private ports (the default) need one. Off by default.'
              checked={settings.data.security.allowPublicPorts}
              disabled={update.isPending}
              onChange={(allowPublicPorts) => update.mutate({ security: { allowPublicPorts } })}
            />
          </div>
        )}
      </Section>
      {settings.data?.experimental.enableEnvironments ? (
        <Section
          id="fleet"
          title="Fleet"
          description="Resource sandboxes a session of an agent with sandbox_fleet may create beside its primary one. Each reserves its config's cpu and memoryMb (1 CPU and 1024 MiB when it sets none)."
        >
          <FleetLimits limits={settings.data.fleet} saving={update.isPending} onSave={(patch) => update.mutate(patch)} />
        </Section>
      ) : null}
    </div>
  );
}
