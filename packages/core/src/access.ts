export const DEPLOYMENT_MODES = ['local_trusted', 'authenticated'] as const;
export type DeploymentMode = (typeof DEPLOYMENT_MODES)[number];

export const API_KEY_ROLES = ['admin', 'agent'] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

/**
 * What a route requires. `public`: anyone (health, login). `admin`: an admin key (or any
 * loopback caller in local_trusted mode). `agent`: any valid key, admin or agent.
 */
export const ROUTE_ACCESS = ['public', 'admin', 'agent'] as const;
export type RouteAccess = (typeof ROUTE_ACCESS)[number];

/** The caller as the server sees it after authentication. */
export interface Principal {
  role: ApiKeyRole;
  /** The API key's id; null for the implicit local operator in local_trusted mode. */
  keyId: string | null;
  /**
   * Set when the request came from inside a sandbox through the host bridge: the session's own
   * principal, acting for that sandbox (activity records it as the actor).
   */
  bridge?: { sandboxId: string; sessionId: string } | undefined;
}

/** Whether a principal may use a route with the given access. */
export function allows(access: RouteAccess, principal: Principal | null): boolean {
  switch (access) {
    case 'public':
      return true;
    case 'agent':
      return principal !== null;
    case 'admin':
      return principal?.role === 'admin';
    default: {
      const never: never = access;
      return never;
    }
  }
}
