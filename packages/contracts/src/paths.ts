/** Every REST path, shared by the server's routes and the client. */
export const API_PATHS = {
  health: '/api/health',
  authSession: '/api/auth/session',
  instanceSettings: '/api/instance/settings',
  environments: '/api/environments',
  environment: '/api/environments/:id',
  environmentRevisions: '/api/environments/:id/revisions',
  sandboxTargets: '/api/sandbox-targets',
  activity: '/api/activity',
  apiKeys: '/api/keys',
  apiKey: '/api/keys/:id',
  customImageOverview: '/api/environments/:environmentId/custom-image-template',
  customImageTemplates: '/api/environments/:environmentId/custom-image-templates',
  customImageRollback: '/api/environments/:environmentId/custom-image-template/rollback',
  customImageRelink: '/api/environments/:environmentId/custom-image-template/relink',
  environmentProbe: '/api/environments/:environmentId/probe',
  setupSessions: '/api/environments/:environmentId/custom-image-setup-sessions',
  setupSession: '/api/environment-custom-image-setup-sessions/:sessionId',
  setupSessionChanges: '/api/environment-custom-image-setup-sessions/:sessionId/changes',
  setupSessionExec: '/api/environment-custom-image-setup-sessions/:sessionId/exec',
  setupSessionFinish: '/api/environment-custom-image-setup-sessions/:sessionId/finish',
  setupSessionCancel: '/api/environment-custom-image-setup-sessions/:sessionId/cancel',
  setupSessionPorts: '/api/environment-custom-image-setup-sessions/:sessionId/ports',
  setupSessionPort: '/api/environment-custom-image-setup-sessions/:sessionId/ports/:port',
  setupSessionPortUrl: '/api/environment-custom-image-setup-sessions/:sessionId/ports/:port/url',
  terminalSessionToken: '/api/environment-custom-image-setup-sessions/:sessionId/terminal-session-token',
  terminalSocket: '/api/environment-custom-image-setup-sessions/:sessionId/terminal/ws',
  baseImages: '/api/providers/:provider/images',
  baseImageImport: '/api/providers/:provider/images/import',
  baseImageBuild: '/api/providers/:provider/images/build',
  baseImage: '/api/providers/:provider/images/:image',
  baseImageExport: '/api/providers/:provider/images/:image/export',
  sandboxes: '/api/sandboxes',
  sandbox: '/api/sandboxes/:id',
  sandboxExec: '/api/sandboxes/:id/exec',
  sandboxPorts: '/api/sandboxes/:id/ports',
  sandboxPort: '/api/sandboxes/:id/ports/:port',
  sandboxPortUrl: '/api/sandboxes/:id/ports/:port/url',
  openApiDocument: '/api/openapi.json',
  apiDocs: '/api/docs',
  apiDocsAsset: '/api/docs/:asset',
  metrics: '/metrics',
} as const;

/** Fills `:param` placeholders, URL-encoding each value. */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${path}`);
    return encodeURIComponent(value);
  });
}
