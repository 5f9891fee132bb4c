import { type CustomImageOverview, type CustomImageTemplateBody, formatBytes } from '@sandcast/contracts';
import { Ban, History, Link2, RefreshCw, TriangleAlert } from 'lucide-react';
import { useState } from 'react';
import { toast } from 'sonner';
import { errorCode, errorDetails, errorMessage } from '../../api/errors.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { CopyableId } from '../../components/CopyButton.tsx';
import { Spinner } from '../../components/States.tsx';
import { StatusBadge } from '../../components/StatusBadge.tsx';
import { Time } from '../../components/time.tsx';
import { customImageToastId, KIND_LABEL, NOT_USED_YET, TOASTS } from './labels.ts';
import type { CustomImageActions } from './use-custom-image-actions.ts';

type Confirm = 'refresh' | 'rollback' | 'disable' | 'relink-drift' | null;

function Row({ term, children }: { term: string; children: React.ReactNode }) {
  return (
    <div className="grid grid-cols-[8rem_1fr] items-center gap-2 py-1">
      <dt className="text-sm text-zinc-400">{term}</dt>
      <dd className="min-w-0 text-sm text-zinc-100">{children}</dd>
    </div>
  );
}

/** The environment's active image, what it is, and Refresh / Rollback / Disable. */
export function ActiveTemplateView({
  template,
  overview,
  providerName,
  canRollback,
  actions,
}: {
  template: CustomImageTemplateBody;
  overview: CustomImageOverview;
  providerName: string;
  canRollback: boolean;
  actions: CustomImageActions;
}) {
  const [confirm, setConfirm] = useState<Confirm>(null);
  const [deleteArtefact, setDeleteArtefact] = useState(false);
  const [driftPaths, setDriftPaths] = useState<string[]>([]);
  const busy = actions.start.isPending || actions.rollback.isPending || actions.disable.isPending || actions.relink.isPending;
  const toastId = customImageToastId(template.environmentId);
  const unchanged = () => toast(TOASTS.unchanged, { id: toastId });

  const relink = (confirmBootSourceDrift: boolean) =>
    actions.relink.mutate(confirmBootSourceDrift, {
      onError: (error) => {
        const details = errorDetails(error);
        if (!confirmBootSourceDrift && errorCode(error) === 'unprocessable' && details?.classification === 'boot_source_drift') {
          setDriftPaths(
            Array.isArray(details.driftedPaths) ? (details.driftedPaths as string[]) : (overview.activeTemplateDrift?.paths ?? []),
          );
          setConfirm('relink-drift');
          return;
        }
        toast.error('Relink failed', { id: toastId, description: errorMessage(error) });
      },
    });

  return (
    <div className="space-y-4" data-testid="active-template">
      {overview.activeTemplateMatchesConfig === false ? (
        <div
          role="alert"
          className="flex flex-wrap items-start gap-3 rounded-md border border-amber-800 bg-amber-950/50 p-3 text-sm"
          data-testid="out-of-sync"
        >
          <TriangleAlert aria-hidden className="mt-0.5 size-4 shrink-0 text-amber-300" />
          <div className="min-w-0 flex-1">
            <p className="font-medium text-amber-100">This image no longer matches the environment's configuration</p>
            <p className="mt-0.5 text-amber-100/90">
              Runs use the base provider configuration until you relink the image or capture a new one.
              {overview.activeTemplateDrift?.paths.length ? (
                <>
                  {' '}
                  Changed: <code className="font-mono text-xs">{overview.activeTemplateDrift.paths.join(', ')}</code>
                </>
              ) : null}
            </p>
          </div>
          <Button size="sm" disabled={busy} onClick={() => relink(false)} icon={<Link2 aria-hidden className="size-3.5" />}>
            {actions.relink.isPending ? 'Relinking…' : 'Relink'}
          </Button>
        </div>
      ) : null}
      <div className="flex flex-wrap items-center gap-2">
        <h3 className="text-sm font-semibold text-zinc-50">Active template</h3>
        <StatusBadge tone="active">active</StatusBadge>
      </div>
      <dl className="divide-y divide-zinc-800/60">
        <Row term="Provider">{providerName}</Row>
        <Row term="Image kind">{KIND_LABEL[template.kind]}</Row>
        <Row term="Ref">{template.providerRef ? <CopyableId value={template.providerRef} label="Copy image ref" /> : '—'}</Row>
        <Row term="Image id">
          <CopyableId value={template.id} label="Copy image id" />
        </Row>
        <Row term="Captured">
          <Time iso={template.capturedAt} relative />
        </Row>
        <Row term="Last used">
          {template.lastUsedAt ? <Time iso={template.lastUsedAt} relative /> : <span className="text-zinc-400">{NOT_USED_YET}</span>}
        </Row>
        <Row term="Size">{formatBytes(template.sizeBytes, '—')}</Row>
      </dl>
      <div className="flex flex-wrap items-center gap-2">
        <Button disabled={busy} onClick={() => setConfirm('refresh')} icon={<RefreshCw aria-hidden className="size-4" />}>
          Refresh
        </Button>
        <Button
          disabled={busy || !canRollback}
          onClick={() => setConfirm('rollback')}
          icon={<History aria-hidden className="size-4" />}
          title={canRollback ? 'Go back to the image this one replaced' : 'There is no previous image to roll back to'}
        >
          Rollback
        </Button>
        {/* Destructive, so quiet until confirmed: the red button lives in the confirmation. */}
        <Button
          variant="ghost"
          className="text-red-300 hover:text-red-200"
          disabled={busy}
          onClick={() => setConfirm('disable')}
          icon={<Ban aria-hidden className="size-4" />}
        >
          Disable
        </Button>
        {busy ? (
          <span className="flex items-center gap-1.5 text-sm text-zinc-300" role="status">
            <Spinner /> Working…
          </span>
        ) : null}
      </div>

      <ConfirmDialog
        open={confirm === 'refresh'}
        onOpenChange={(open) => !open && setConfirm(null)}
        onCancel={unchanged}
        title="Refresh the custom image?"
        description="Starts a new setup session seeded from the current active image. Add what you need, then click Finished to capture a new image that supersedes this one."
        confirmLabel="Start setup"
        onConfirm={() => actions.start.mutate(template.id)}
      />
      <ConfirmDialog
        open={confirm === 'rollback'}
        onOpenChange={(open) => !open && setConfirm(null)}
        onCancel={unchanged}
        title="Roll back to the previous image?"
        description="The image that was active before this one becomes active again. Future runs boot from it."
        confirmLabel="Rollback"
        onConfirm={() => actions.rollback.mutate()}
      />
      <ConfirmDialog
        open={confirm === 'disable'}
        onOpenChange={(open) => !open && setConfirm(null)}
        onCancel={unchanged}
        danger
        title="Disable the custom image?"
        description="The active image is retired. Future runs fall back to the environment's base provider configuration, as if no image had been captured."
        confirmLabel="Disable"
        onConfirm={() => actions.disable.mutate(deleteArtefact)}
      >
        <label className="mt-3 flex items-center gap-2 text-sm text-zinc-200">
          <input type="checkbox" checked={deleteArtefact} onChange={(e) => setDeleteArtefact(e.target.checked)} />
          Also delete the provider's {KIND_LABEL[template.kind].toLowerCase()}
        </label>
      </ConfirmDialog>
      <ConfirmDialog
        open={confirm === 'relink-drift'}
        onOpenChange={(open) => !open && setConfirm(null)}
        onCancel={unchanged}
        title="The boot source changed — relink anyway?"
        description={
          <div className="space-y-2">
            <p>
              The image was captured from a different boot source than the configuration has now. Runs would boot the old image with the new
              settings.
            </p>
            {driftPaths.length ? (
              <p>
                Changed: <code className="font-mono text-xs">{driftPaths.join(', ')}</code>
              </p>
            ) : null}
            <p>Capturing a new image with Refresh is the safer choice.</p>
          </div>
        }
        confirmLabel="Relink anyway"
        danger
        onConfirm={() => relink(true)}
      />
    </div>
  );
}
