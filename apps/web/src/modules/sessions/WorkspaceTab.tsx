import type { SessionBody, SessionSandboxBody } from '@sandcast/contracts';
import { CircleStop, Play, Square } from 'lucide-react';
import { type ReactNode, useState } from 'react';
import { Link } from 'react-router';
import { useEnvironment, useProviderName } from '../../api/queries.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { CopyableId } from '../../components/CopyButton.tsx';
import { Time } from '../../components/time.tsx';
import { SandboxStateLine } from '../sandboxes/SandboxState.tsx';
import { CheckpointTimeline } from './CheckpointTimeline.tsx';
import { unavailableReason, useWorkspaceActions, type WorkspaceAction } from './session-actions.ts';

const CAPABILITY_WORDS: Record<keyof SessionSandboxBody['capabilities'], string> = {
  nativeProcesses: 'native processes',
  packages: 'packages',
  pty: 'terminal',
  ports: 'ports',
  portableCheckpoint: 'portable checkpoint',
  networkEnforced: 'network enforced',
};

function Row({ label, children, testId }: { label: string; children: ReactNode; testId: string }) {
  return (
    <div className="grid grid-cols-[10rem_1fr] items-baseline gap-x-4 py-1.5">
      <dt className="text-zinc-400">{label}</dt>
      <dd className="min-w-0 text-zinc-100" data-testid={`workspace-${testId}`}>
        {children}
      </dd>
    </div>
  );
}

function ActionButton({
  action,
  allowed,
  reason,
  pending,
  onClick,
  children,
  icon,
  danger,
}: {
  action: WorkspaceAction;
  allowed: boolean;
  reason: string;
  pending: boolean;
  onClick: () => void;
  children: string;
  icon: ReactNode;
  danger?: boolean;
}) {
  const reasonId = `workspace-${action}-reason`;
  return (
    <div className="flex flex-col items-start gap-1">
      <Button
        variant={danger ? 'danger' : 'secondary'}
        disabled={!allowed || pending}
        onClick={onClick}
        icon={icon}
        aria-describedby={allowed ? undefined : reasonId}
        title={allowed ? undefined : reason}
      >
        {children}
      </Button>
      {allowed ? null : (
        <span id={reasonId} className="max-w-48 text-xs text-zinc-400">
          {reason}
        </span>
      )}
    </div>
  );
}

/**
 * The session's primary sandbox as it was pinned: ids, revision, target, containment,
 * capabilities, recovery class, generation and state; Stop, Start and End when the server offers them.
 */
export function WorkspaceTab({ session, sandbox }: { session: SessionBody; sandbox: SessionSandboxBody | null }) {
  const providerName = useProviderName();
  const environment = useEnvironment(sandbox?.environmentId ?? '', sandbox?.environmentId != null);
  const actions = useWorkspaceActions(session.id);
  const [confirmEnd, setConfirmEnd] = useState(false);
  const allowed = (action: WorkspaceAction) =>
    sandbox ? sandbox.allowedActions.includes(action) : action === 'end' && session.status === 'active';
  const pending = actions.isPending ? actions.variables : null;
  const button = (action: WorkspaceAction, label: string, busy: string, icon: ReactNode, onClick: () => void, danger = false) => (
    <ActionButton
      action={action}
      allowed={allowed(action)}
      reason={unavailableReason(action, session, sandbox)}
      pending={actions.isPending}
      onClick={onClick}
      icon={icon}
      danger={danger}
    >
      {pending === action ? busy : label}
    </ActionButton>
  );
  return (
    <div className="space-y-4">
      {sandbox ? (
        <dl className="divide-y divide-zinc-800 text-sm">
          <Row label="Primary sandbox" testId="sandbox-id">
            <CopyableId value={sandbox.sandboxId} label="Copy sandbox id" />
          </Row>
          <Row label="Binding" testId="binding">
            <span className="font-mono">{sandbox.bindingName}</span>
          </Row>
          <Row label="Pinned revision" testId="revision">
            {environment.data ? <span className="mr-1.5">{environment.data.name}</span> : null}
            {sandbox.environmentId ? (
              <Link to={`/environments/${sandbox.environmentId}#revisions`} className="font-mono text-teal-300 hover:text-teal-200">
                {sandbox.environmentRevisionNumber !== null ? `#${sandbox.environmentRevisionNumber}` : sandbox.environmentRevisionId}
              </Link>
            ) : (
              <span className="font-mono">{sandbox.environmentRevisionId}</span>
            )}
          </Row>
          <Row label="Image" testId="image">
            {sandbox.imageId ? <CopyableId value={sandbox.imageId} label="Copy image id" /> : 'the base configuration'}
          </Row>
          <Row label="Target" testId="target">
            {providerName(sandbox.target.provider)}
          </Row>
          <Row label="Containment" testId="containment">
            Network <span className="font-mono">{sandbox.containment.network}</span>
            {sandbox.containment.hosts.length ? ` (${sandbox.containment.hosts.join(', ')})` : ''}
            <span className="text-zinc-400">
              {sandbox.containment.networkEnforced ? ' — enforced by the provider' : ' — declared; this provider does not enforce it'}
            </span>
          </Row>
          <Row label="Capabilities" testId="capabilities">
            <ul className="flex flex-wrap gap-1.5" aria-label="Capabilities">
              {(Object.keys(CAPABILITY_WORDS) as (keyof typeof CAPABILITY_WORDS)[]).map((key) => (
                <li
                  key={key}
                  className={`rounded border px-1.5 py-0.5 text-xs ${sandbox.capabilities[key] ? 'border-zinc-600 text-zinc-100' : 'border-zinc-800 text-zinc-400 line-through'}`}
                >
                  <span className="sr-only">{sandbox.capabilities[key] ? 'has ' : 'lacks '}</span>
                  {CAPABILITY_WORDS[key]}
                </li>
              ))}
            </ul>
          </Row>
          <Row label="Recovery class" testId="recovery">
            {sandbox.recoveryClass} <span className="text-zinc-400">(durability {sandbox.durability})</span>
          </Row>
          <Row label="Lifecycle" testId="lifecycle">
            After {sandbox.lifecycle.idleAfterSeconds} s idle: <span className="font-mono">{sandbox.lifecycle.idleAction}</span>
          </Row>
          <Row label="Generation" testId="generation">
            <span className="font-mono">{sandbox.generation}</span>
          </Row>
          <Row label="State" testId="state">
            <SandboxStateLine desired={sandbox.desiredState} observed={sandbox.observedState} />
            {sandbox.failureReason ? <p className="mt-1 text-red-300">{sandbox.failureReason}</p> : null}
          </Row>
          <Row label="Last activity" testId="last-activity">
            <Time iso={sandbox.lastActivityAt} relative /> <span className="font-mono text-xs text-zinc-400">{sandbox.lastActivityAt}</span>
          </Row>
        </dl>
      ) : (
        <p className="text-sm text-zinc-300" data-testid="no-sandbox">
          This session has no sandbox: its agent's policy is "no sandbox".
        </p>
      )}
      {sandbox?.durability === 'checkpointed' ? (
        <CheckpointTimeline sessionId={session.id} canUse={sandbox.allowedActions.includes('exec')} />
      ) : null}
      <div className="flex flex-wrap items-start gap-3 border-t border-zinc-800 pt-4">
        {sandbox ? (
          <>
            {button('stop', 'Stop', 'Stopping…', <Square aria-hidden className="size-4" />, () => actions.mutate('stop'))}
            {button('start', 'Start', 'Starting…', <Play aria-hidden className="size-4" />, () => actions.mutate('start'))}
          </>
        ) : null}
        {button('end', 'End session', 'Ending…', <CircleStop aria-hidden className="size-4" />, () => setConfirmEnd(true), true)}
      </div>
      <ConfirmDialog
        open={confirmEnd}
        onOpenChange={setConfirmEnd}
        danger
        title="End this session?"
        description="Its sandbox's compute is torn down and anything not saved elsewhere is gone. The session's records stay readable."
        confirmLabel="End session"
        onConfirm={() => actions.mutate('end')}
      />
    </div>
  );
}
