/** Every REST path, shared by the server's routes and the client. */
export const API_PATHS = {
  health: '/api/health',
  instanceSettings: '/api/instance/settings',
  environments: '/api/environments',
  environment: '/api/environments/:id',
  environmentRevisions: '/api/environments/:id/revisions',
  sandboxTargets: '/api/sandbox-targets',
  activity: '/api/activity',
  apiKeys: '/api/keys',
  apiKey: '/api/keys/:id',
} as const;

/** Fills `:param` placeholders, URL-encoding each value. */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${path}`);
    return encodeURIComponent(value);
  });
}
