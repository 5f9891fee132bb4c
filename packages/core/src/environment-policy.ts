import type { DeploymentMode } from './access.ts';
import { sandboxPathProblem } from './sandbox-path.ts';

/** What the instance allows an environment's config to ask for. */
export interface EnvironmentPolicy {
  mode: DeploymentMode;
  /** The instance setting `security.allowHostNetwork`. */
  allowHostNetwork: boolean;
}

/** Top-level config fields that name a directory inside the sandbox, whatever the provider. */
const SANDBOX_PATH_FIELDS = ['workdir', 'cwd'] as const;

/**
 * Providers spell "share the host's network stack" as `network: "host"`. It gives sandbox code the
 * host's loopback: this server's API (which trusts loopback callers in local_trusted mode), a
 * local Postgres, abstract unix sockets. Docker's `bridge` is not this: it reaches the internet,
 * not the host's loopback.
 */
function usesHostNetwork(config: Record<string, unknown>): boolean {
  return config.network === 'host';
}

/** Why a host-network config is refused under this policy, or null when it is allowed. */
function hostNetworkRefusal(policy: EnvironmentPolicy): string | null {
  if (policy.mode === 'local_trusted') {
    return (
      'network "host" would give sandbox code this server\'s API, which trusts every loopback caller in local_trusted mode; ' +
      'use network "none" (Docker: "bridge" for internet access)'
    );
  }
  if (!policy.allowHostNetwork) {
    return (
      'network "host" shares the host\'s network stack with sandbox code and is off on this instance; use network "none", ' +
      'or have an admin turn on Settings → Instance settings → Security → Allow host network'
    );
  }
  return null;
}

/**
 * Checks a provider-parsed environment config against the instance's policy: the host network
 * only where allowed, and sandbox paths that neither climb out (`..`) nor carry NUL. Each issue
 * names its field with the `config.` prefix clients point at.
 */
export function environmentConfigIssues(
  config: Record<string, unknown>,
  policy: EnvironmentPolicy,
): Array<{ path: string; message: string }> {
  const issues: Array<{ path: string; message: string }> = [];
  if (usesHostNetwork(config)) {
    const refusal = hostNetworkRefusal(policy);
    if (refusal) issues.push({ path: 'config.network', message: refusal });
  }
  for (const field of SANDBOX_PATH_FIELDS) {
    const value = config[field];
    if (typeof value !== 'string') continue;
    const problem = sandboxPathProblem(value);
    if (problem) issues.push({ path: `config.${field}`, message: `${field} ${problem}` });
  }
  return issues;
}
