import { SandcastApiError, type SandcastClient } from '@sandcast/client';
import type { EnvironmentBody, SetupSessionBody } from '@sandcast/contracts';

/** The setup session a command acts on, and its environment when the target named one. */
export interface SessionTarget {
  session: SetupSessionBody;
  environment: EnvironmentBody | undefined;
}

/**
 * Resolves `<env|session-id>`: an environment (by name or id) means its active setup session;
 * anything else is taken as a session id.
 */
export async function resolveSessionTarget(client: SandcastClient, target: string): Promise<SessionTarget> {
  const environments = await client.environments.list();
  const environment = environments.find((e) => e.id === target) ?? environments.find((e) => e.name === target);
  if (environment) {
    const overview = await client.customImages.overview(environment.id);
    if (!overview.activeSession) {
      throw new SandcastApiError({
        status: 409,
        code: 'conflict',
        message: `no setup session is running for environment "${environment.name}"; start one with \`sandcast image setup ${environment.name}\``,
      });
    }
    return { session: overview.activeSession, environment };
  }
  try {
    return { session: (await client.customImages.getSetup(target)).session, environment: undefined };
  } catch (error) {
    if (error instanceof SandcastApiError && error.status === 404) {
      throw new SandcastApiError({
        status: 404,
        code: 'not_found',
        message: `no environment or setup session named or with id "${target}"`,
      });
    }
    throw error;
  }
}
