import type { SandboxBody } from '@sandcast/contracts';
import { StatusBadge, type StatusTone } from '../../components/StatusBadge.tsx';

type Observed = SandboxBody['status'];
type Desired = SandboxBody['desiredStatus'];

const OBSERVED_TONE: Record<Observed, StatusTone> = {
  starting: 'running',
  running: 'active',
  stopped: 'muted',
  lost: 'warning',
  failed: 'failed',
  deleted: 'neutral',
};

/** What each desired state means once the reconciler reaches it. */
const DESIRED_REACHED: Record<Desired, readonly Observed[]> = {
  ready: ['running'],
  stopped: ['stopped'],
  deleted: ['deleted'],
};

/** The reconciler has reached what was asked (or cannot move any more). */
export function sandboxSettled(desired: Desired, observed: Observed): boolean {
  return DESIRED_REACHED[desired].includes(observed) || observed === 'failed';
}

export function ObservedBadge({ status }: { status: Observed }) {
  return <StatusBadge tone={OBSERVED_TONE[status]}>{status}</StatusBadge>;
}

/**
 * Desired beside observed: "ready → starting" while the reconciler moves it, just the observed
 * state once it got there.
 */
export function SandboxStateLine({ desired, observed }: { desired: Desired; observed: Observed }) {
  const settled = sandboxSettled(desired, observed);
  return (
    <span className="inline-flex items-center gap-1.5 text-sm" data-testid="sandbox-state">
      <span className="text-zinc-400">Desired</span>
      <span className="font-mono text-zinc-200">{desired}</span>
      <span className="text-zinc-400">· observed</span>
      <ObservedBadge status={observed} />
      {settled ? null : <span className="text-xs text-zinc-400">(moving)</span>}
    </span>
  );
}
