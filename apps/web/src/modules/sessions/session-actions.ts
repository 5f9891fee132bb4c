import type { SandboxAction, SessionBody, SessionSandboxBody } from '@sandcast/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { errorMessage } from '../../api/errors.ts';
import { queryKeys } from '../../api/query-keys.ts';

export type WorkspaceAction = Extract<SandboxAction, 'stop' | 'start' | 'end'>;

/** Why an action the server does not offer right now is not offered, in the operator's words. */
export function unavailableReason(action: SandboxAction, session: SessionBody, sandbox: SessionSandboxBody | null): string {
  if (session.status === 'ended') return 'The session has ended.';
  if (!sandbox) return action === 'end' ? 'The session cannot be ended right now.' : 'This session has no sandbox.';
  const observed = sandbox.observedState;
  switch (action) {
    case 'stop':
      return observed === 'stopped' ? 'The sandbox is already stopped.' : `A sandbox that is ${observed} cannot be stopped now.`;
    case 'start':
      return observed === 'running' || observed === 'starting'
        ? `The sandbox is already ${observed}.`
        : `A sandbox that is ${observed} cannot be started now.`;
    case 'end':
      return 'The session cannot be ended right now.';
    default:
      return observed === 'running' ? 'This provider does not offer it.' : `The sandbox is ${observed}: start it first.`;
  }
}

/** Stop, Start and End of a session's workspace, each refreshing what it changes. */
export function useWorkspaceActions(sessionId: string) {
  const client = useClient();
  const queryClient = useQueryClient();
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: queryKeys.session(sessionId) }),
      queryClient.invalidateQueries({ queryKey: queryKeys.sessions, exact: true }),
      queryClient.invalidateQueries({ queryKey: queryKeys.sandboxes }),
    ]);
  return useMutation({
    mutationFn: async (action: WorkspaceAction) => {
      if (action === 'end') return client.sessions.end(sessionId);
      return action === 'stop' ? client.sessions.stopSandbox(sessionId) : client.sessions.startSandbox(sessionId);
    },
    onSuccess: (_, action) =>
      toast.success(action === 'end' ? 'Session ended' : action === 'stop' ? 'Stopping the sandbox' : 'Starting the sandbox', {
        id: `session-${sessionId}`,
      }),
    onError: (error, action) =>
      toast.error(action === 'end' ? 'The session was not ended' : `The sandbox was not ${action === 'stop' ? 'stopped' : 'started'}`, {
        id: `session-${sessionId}`,
        description: errorMessage(error),
      }),
    onSettled: refresh,
  });
}
