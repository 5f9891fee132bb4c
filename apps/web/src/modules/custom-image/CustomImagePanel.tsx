import { type EnvironmentBody, SETUP_SESSION_LABELS } from '@sandcast/contracts';
import { Wrench } from 'lucide-react';
import { useCustomImageHistory, useCustomImageOverview } from '../../api/queries.ts';
import { Button } from '../../components/Button.tsx';
import { Section } from '../../components/Section.tsx';
import { QueryState, Spinner } from '../../components/States.tsx';
import { StatusBadge } from '../../components/StatusBadge.tsx';
import { Elapsed } from '../../components/time.tsx';
import { ActiveTemplateView } from './ActiveTemplateView.tsx';
import { ImageHistory } from './ImageHistory.tsx';
import { ACTIVE_SESSION_STATUSES } from './labels.ts';
import { SessionStatusLine } from './SessionStatusLine.tsx';
import { SetupNetworkNote } from './SetupNetworkNote.tsx';
import { SetupSessionView } from './SetupSessionView.tsx';
import { useCustomImageActions } from './use-custom-image-actions.ts';

const PANEL_DESCRIPTION =
  'Start a setup sandbox, prepare it in the browser terminal, then capture the running machine as a reusable image for future runs.';

/**
 * The Custom image section of an existing environment: what the provider can do, the setup
 * session while one runs, the active image and its actions, and every image it ever had.
 */
export function CustomImagePanel({ environment, providerName }: { environment: EnvironmentBody; providerName: string }) {
  const overview = useCustomImageOverview(environment.id);
  const history = useCustomImageHistory(environment.id);
  const actions = useCustomImageActions(environment.id);

  const capability = overview.data?.capability;
  return (
    <Section
      id="custom-image"
      title="Custom image"
      description={PANEL_DESCRIPTION}
      actions={
        capability ? <StatusBadge tone={capability.state === 'template_setup' ? 'neutral' : 'muted'}>{capability.label}</StatusBadge> : null
      }
    >
      <QueryState query={overview} loading="Loading the custom image" lines={4} errorTitle="Could not load the custom image">
        {(data) => (
          <>
            {data.capability.state === 'template_setup' ? <SetupNetworkNote containment={environment.spec.containment} /> : null}
            <PanelBody
              environmentId={environment.id}
              providerName={providerName}
              overview={data}
              history={history.data ?? []}
              actions={actions}
            />
          </>
        )}
      </QueryState>
    </Section>
  );
}

function PanelBody({
  providerName,
  overview,
  history,
  actions,
}: {
  environmentId: string;
  providerName: string;
  overview: NonNullable<ReturnType<typeof useCustomImageOverview>['data']>;
  history: NonNullable<ReturnType<typeof useCustomImageHistory>['data']>;
  actions: ReturnType<typeof useCustomImageActions>;
}) {
  const { capability, activeSession, latestSession, activeTemplate } = overview;
  if (capability.state === 'unsupported_provider') {
    return (
      <p className="text-sm text-zinc-300" data-testid="capability-message">
        {capability.message ?? 'This provider does not advertise interactive template setup.'}
      </p>
    );
  }
  if (capability.state === 'capture_unavailable') {
    return (
      <p className="text-sm text-zinc-300" data-testid="capability-message">
        {capability.message ?? 'This provider advertises setup, but image capture is unavailable.'}
      </p>
    );
  }

  const session = activeSession && ACTIVE_SESSION_STATUSES.has(activeSession.status) ? activeSession : null;
  const browserTerminal = capability.connectionTypes.length > 0;
  const canRollback = activeTemplate
    ? history.some((t) => t.status === 'superseded' && t.supersededByTemplateId === activeTemplate.id)
    : false;
  // The end of the last session (captured, cancelled, expired, failed) stays in view until the
  // next one — except a capture whose image has since been disabled: "Template captured" above
  // "Not configured" would contradict itself.
  const lastEnded =
    !session &&
    latestSession &&
    !ACTIVE_SESSION_STATUSES.has(latestSession.status) &&
    !(latestSession.status === 'promoted' && !activeTemplate)
      ? latestSession
      : null;
  const starting = !session && actions.start.isPending;

  return (
    <div className="space-y-5">
      {starting ? <SetupStarting fromImage={Boolean(actions.start.variables)} startedAt={actions.start.submittedAt} /> : null}
      {session ? (
        <SetupSessionView key={session.id} session={session} actions={actions} browserTerminal={browserTerminal} />
      ) : (
        <>
          {lastEnded ? <SessionStatusLine session={lastEnded} /> : null}
          {activeTemplate ? (
            <ActiveTemplateView
              template={activeTemplate}
              overview={overview}
              providerName={providerName}
              canRollback={canRollback}
              actions={actions}
            />
          ) : (
            <div
              className="flex flex-wrap items-center justify-between gap-3 rounded-md border border-dashed border-zinc-700 p-4"
              data-testid="not-configured"
            >
              <div>
                <p className="text-sm font-medium text-zinc-100">Not configured</p>
                <p className="text-sm text-zinc-300">Capture a custom {providerName} image with your tools already logged in.</p>
              </div>
              <Button
                variant="primary"
                disabled={actions.start.isPending}
                onClick={() => actions.start.mutate(undefined)}
                icon={actions.start.isPending ? <Spinner /> : <Wrench aria-hidden className="size-4" />}
              >
                {actions.start.isPending ? 'Starting…' : 'Configure image'}
              </Button>
            </div>
          )}
        </>
      )}
      <ImageHistory templates={history} />
    </div>
  );
}

/** Between the click and the server's answer: the state as the product doc names it. */
function SetupStarting({ fromImage, startedAt }: { fromImage: boolean; startedAt: number }) {
  return (
    <div className="space-y-2" data-testid="setup-starting">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
        <span className="text-zinc-400">Status</span>
        <StatusBadge tone="running">{SETUP_SESSION_LABELS.starting}</StatusBadge>
      </div>
      <p className="flex items-center gap-2 text-sm text-zinc-200" role="status">
        <Spinner /> {fromImage ? 'Starting a refresh session from the active image…' : 'Starting the setup sandbox…'}{' '}
        <Elapsed since={startedAt || Date.now()} />
      </p>
    </div>
  );
}
