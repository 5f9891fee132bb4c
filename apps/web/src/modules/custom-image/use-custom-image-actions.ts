import { useMutation, useQueryClient } from '@tanstack/react-query';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { errorMessage } from '../../api/errors.ts';
import { queryKeys } from '../../api/query-keys.ts';
import { customImageToastId, TOASTS } from './labels.ts';

/** Every custom image action, each invalidating the environment's custom image queries when it settles. */
export function useCustomImageActions(environmentId: string) {
  const client = useClient();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.customImage(environmentId) });
  // One toast per environment's image: the newest outcome replaces the last instead of stacking.
  const id = customImageToastId(environmentId);
  const failed = (what: string) => (error: unknown) => toast.error(what, { id, description: errorMessage(error) });

  return {
    start: useMutation({
      mutationFn: (templateId?: string) => client.customImages.startSetup(environmentId, templateId ? { templateId } : {}),
      onSuccess: (answer) => queryClient.setQueryData(queryKeys.setupSession(answer.session.id), answer),
      onError: failed('The setup session did not start'),
      onSettled: refresh,
    }),
    finish: useMutation({
      mutationFn: (sessionId: string) => client.customImages.finish(sessionId),
      onSuccess: () => toast.success('Template captured', { id, description: TOASTS.promoted }),
      onError: failed('Capture failed'),
      onSettled: refresh,
    }),
    cancel: useMutation({
      mutationFn: (sessionId: string) => client.customImages.cancel(sessionId),
      onSuccess: () => toast('Setup cancelled', { id, description: TOASTS.unchanged }),
      onError: failed('The setup session was not cancelled'),
      onSettled: refresh,
    }),
    rollback: useMutation({
      mutationFn: () => client.customImages.rollback(environmentId),
      onSuccess: () => toast.success('Rolled back', { id, description: TOASTS.rolledBack }),
      onError: failed('Rollback failed'),
      onSettled: refresh,
    }),
    disable: useMutation({
      mutationFn: (deleteProviderTemplate: boolean) => client.customImages.disable(environmentId, { deleteProviderTemplate }),
      onSuccess: (answer) =>
        toast.success('Custom image disabled', {
          id,
          description: answer.providerTemplateNote ? `${TOASTS.disabled} ${answer.providerTemplateNote}` : TOASTS.disabled,
        }),
      onError: failed('The custom image was not disabled'),
      onSettled: refresh,
    }),
    relink: useMutation({
      mutationFn: (confirmBootSourceDrift: boolean) => client.customImages.relink(environmentId, { confirmBootSourceDrift }),
      onSuccess: () => toast.success('Template relinked', { id, description: TOASTS.promoted }),
      onSettled: refresh,
    }),
  };
}

export type CustomImageActions = ReturnType<typeof useCustomImageActions>;
