import { type ConnectionPayload, SETUP_SESSION_LABELS, type SetupSessionBody } from '@sandcast/contracts';
import { useQuery } from '@tanstack/react-query';
import { Check, Terminal, X } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { useClient } from '../../api/client-context.tsx';
import { queryKeys } from '../../api/query-keys.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { CopyableCode } from '../../components/CopyButton.tsx';
import { OpenPorts } from '../../components/OpenPorts.tsx';
import { Spinner } from '../../components/States.tsx';
import { Elapsed } from '../../components/time.tsx';
import { BrowserTerminal } from '../terminal/BrowserTerminal.tsx';
import { CaptureReview, useQuietRefresh, useSetupChanges } from './CaptureReview.tsx';
import { SessionStatusLine } from './SessionStatusLine.tsx';
import type { CustomImageActions } from './use-custom-image-actions.ts';

const NO_BROWSER_TERMINAL =
  'Browser terminal is not available for this provider connection. Use the provider setup instructions, then finish or cancel here.';

/** The raw SSH command, for an external terminal, scp or an editor's remote-SSH. */
function SshFallback({ payload }: { payload: Extract<ConnectionPayload, { type: 'ssh' }> }) {
  return (
    <details className="group rounded-md border border-zinc-800" data-testid="ssh-fallback">
      <summary className="flex cursor-pointer items-center gap-2 px-3 py-2 text-sm text-zinc-200 select-none hover:bg-zinc-900">
        <Terminal aria-hidden className="size-4 text-zinc-400" />
        SSH command fallback
        <span className="text-xs text-zinc-400 group-open:hidden">— show the command for your own terminal</span>
      </summary>
      <div className="space-y-2 border-t border-zinc-800 p-3">
        <CopyableCode value={payload.command} label="Copy SSH command" />
        <p className="text-xs text-zinc-400">
          The command carries a credential that expires with the session ({new Date(payload.expiresAt).toLocaleTimeString()}). Come back
          here to click Finished or Cancel.
        </p>
      </div>
    </details>
  );
}

/** A setup session in progress: status, terminal, review, Finished and Cancel. */
export function SetupSessionView({
  session,
  actions,
  browserTerminal,
}: {
  session: SetupSessionBody;
  actions: CustomImageActions;
  /** False when the provider's connection types leave no way for the browser terminal in. */
  browserTerminal: boolean;
}) {
  const client = useClient();
  const [terminalUnavailable, setTerminalUnavailable] = useState(!browserTerminal);
  const [confirmFinish, setConfirmFinish] = useState(false);
  const [confirmCancel, setConfirmCancel] = useState(false);
  const [captureStartedAt, setCaptureStartedAt] = useState<number | null>(null);
  const running = session.status === 'waiting_for_user';
  const capturing = session.status === 'capturing' || actions.finish.isPending;
  const setup = useQuery({
    queryKey: queryKeys.setupSession(session.id),
    queryFn: () => client.customImages.getSetup(session.id),
    enabled: running,
    staleTime: 60_000,
  });
  const payload = setup.data?.connectionPayload ?? null;
  const changes = useSetupChanges(session.id, running);
  const busy = capturing || actions.cancel.isPending;
  // The review follows the terminal: it refreshes once the shell's output goes quiet.
  const refreshReview = useQuietRefresh(() => void changes.refetch(), running && !capturing);
  // Focus coming back into the panel from elsewhere on the page: the list may be stale.
  const panelRef = useRef<HTMLDivElement>(null);
  const refetchOnFocusRef = useRef(() => {});
  refetchOnFocusRef.current = () => {
    if (running && !capturing) void changes.refetch();
  };
  useEffect(() => {
    const panel = panelRef.current;
    if (!panel) return;
    const onFocusIn = (event: FocusEvent) => {
      if (!panel.contains(event.relatedTarget as Node | null)) refetchOnFocusRef.current();
    };
    panel.addEventListener('focusin', onFocusIn);
    return () => panel.removeEventListener('focusin', onFocusIn);
  }, []);
  const cancel = async () => {
    // Changes would be thrown away: ask first, as every other action does.
    const latest = running ? await changes.refetch() : null;
    if (latest?.data?.changes.length) setConfirmCancel(true);
    else actions.cancel.mutate(session.id);
  };

  return (
    <div className="space-y-4" ref={panelRef}>
      <SessionStatusLine session={session} label={capturing ? SETUP_SESSION_LABELS.capturing : undefined} />
      {session.sourceTemplateId ? (
        <p className="text-sm text-zinc-300" data-testid="setup-source">
          Refresh session: started from the active image <span className="font-mono text-xs">{session.sourceTemplateId}</span>. Finished
          captures a new image that supersedes it.
        </p>
      ) : null}
      {session.status === 'starting' ? (
        <p className="flex items-center gap-2 text-sm text-zinc-200" role="status">
          <Spinner /> Starting the setup sandbox… <Elapsed since={Date.parse(session.createdAt)} />
        </p>
      ) : null}
      {capturing ? (
        <p className="flex items-center gap-2 text-sm text-sky-200" role="status" data-testid="capture-progress">
          <Spinner /> Capturing template… <Elapsed since={captureStartedAt ?? Date.parse(session.updatedAt)} />
        </p>
      ) : null}
      {(running || capturing) && !terminalUnavailable ? (
        <BrowserTerminal
          target={{ kind: 'setup', id: session.id }}
          autoOpen={running}
          capturing={capturing}
          onOutput={refreshReview}
          onUnavailable={() => setTerminalUnavailable(true)}
        />
      ) : null}
      {running && terminalUnavailable ? (
        <p className="rounded-md border border-zinc-700 bg-zinc-900 p-3 text-sm text-zinc-200" data-testid="no-browser-terminal">
          {NO_BROWSER_TERMINAL}
        </p>
      ) : null}
      {running && payload?.type === 'ssh' ? <SshFallback payload={payload} /> : null}
      {/* During the capture the list stays as it was last seen; it cannot change any more. */}
      {running || capturing ? <CaptureReview sessionId={session.id} enabled={running && !capturing} /> : null}
      {running && !capturing ? (
        <OpenPorts
          api={client.customImages.ports}
          ownerId={session.id}
          queryKey={queryKeys.setupPorts(session.id)}
          hint="Serve a server running in the setup sandbox as a URL to try it before capturing. Every port closes when the session ends or Finished begins the capture."
        />
      ) : null}
      <div className="flex flex-wrap items-center gap-2">
        <Button
          variant="primary"
          disabled={!running || busy}
          onClick={() => {
            void changes.refetch();
            setConfirmFinish(true);
          }}
          icon={<Check aria-hidden className="size-4" />}
          title={
            running ? 'Capture the running setup sandbox as this environment’s image' : 'Finished is available while the setup is running'
          }
        >
          Finished
        </Button>
        <Button
          variant="secondary"
          disabled={busy || session.status === 'capturing'}
          onClick={() => void cancel()}
          icon={<X aria-hidden className="size-4" />}
        >
          {actions.cancel.isPending ? 'Cancelling…' : 'Cancel'}
        </Button>
        {!running && !capturing ? <span className="text-xs text-zinc-400">Finished is available once the setup is running.</span> : null}
      </div>
      <ConfirmDialog
        open={confirmCancel}
        onOpenChange={setConfirmCancel}
        danger
        title="Cancel this setup session?"
        description={`The setup sandbox is destroyed with its ${changes.data?.changes.length ?? 0} changed path${changes.data?.changes.length === 1 ? '' : 's'}. The active image stays as it is.`}
        confirmLabel="Cancel setup"
        cancelLabel="Keep working"
        onConfirm={() => actions.cancel.mutate(session.id)}
      />
      <ConfirmDialog
        open={confirmFinish}
        onOpenChange={setConfirmFinish}
        title="Capture this machine as the environment's image?"
        confirmLabel="Capture image"
        onConfirm={() => {
          setCaptureStartedAt(Date.now());
          actions.finish.mutate(session.id);
        }}
        description={
          <div className="space-y-2">
            <p>
              The running setup sandbox becomes the active custom image; the image active now is kept as superseded, so you can roll back.
            </p>
            {changes.data ? (
              <p>
                {changes.data.changes.length} changed path{changes.data.changes.length === 1 ? '' : 's'}
                {changes.data.warnings.length ? (
                  <span className="text-amber-200">
                    {' '}
                    · {changes.data.warnings.length} likely secret{changes.data.warnings.length === 1 ? '' : 's'}:{' '}
                    {changes.data.warnings.map((w) => w.path).join(', ')}
                  </span>
                ) : null}
              </p>
            ) : null}
          </div>
        }
      />
    </div>
  );
}
