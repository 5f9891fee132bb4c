/** TanStack Query keys, one family per resource; mutations invalidate the family they change. */
export const queryKeys = {
  health: ['health'] as const,
  authSession: ['auth-session'] as const,
  settings: ['settings'] as const,
  targets: ['targets'] as const,
  environments: ['environments'] as const,
  environment: (id: string) => ['environments', id] as const,
  revisions: (id: string) => ['environments', id, 'revisions'] as const,
  customImage: (environmentId: string) => ['custom-image', environmentId] as const,
  customImageOverview: (environmentId: string) => ['custom-image', environmentId, 'overview'] as const,
  customImageHistory: (environmentId: string) => ['custom-image', environmentId, 'history'] as const,
  setupSession: (sessionId: string) => ['setup-session', sessionId] as const,
  setupChanges: (sessionId: string) => ['setup-session', sessionId, 'changes'] as const,
  setupPorts: (sessionId: string) => ['setup-session', sessionId, 'ports'] as const,
  sandboxes: ['sandboxes'] as const,
  sandbox: (id: string) => ['sandboxes', id] as const,
  sandboxPorts: (id: string) => ['sandboxes', id, 'ports'] as const,
};
