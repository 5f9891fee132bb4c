import type { SetupSessionBody } from '@sandcast/contracts';
import { StatusBadge } from '../../components/StatusBadge.tsx';
import { formatRelative, useNow } from '../../components/time.tsx';
import { ACTIVE_SESSION_STATUSES, sessionTone } from './labels.ts';

/**
 * "Setup running · expires in 58 min (10:42)", or the end state with its reason. `label` names
 * a state the page knows before the server does (a capture it just asked for).
 */
export function SessionStatusLine({ session, label }: { session: SetupSessionBody; label?: string }) {
  const now = useNow(15_000);
  const active = ACTIVE_SESSION_STATUSES.has(session.status);
  const expires = new Date(session.expiresAt);
  return (
    <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm" data-testid="setup-status">
      <span className="text-zinc-400">Status</span>
      <StatusBadge tone={sessionTone(session.status)}>{label ?? session.statusLabel}</StatusBadge>
      {active ? (
        <span className="text-zinc-300">
          Expires {formatRelative(session.expiresAt, now)}{' '}
          <time dateTime={session.expiresAt} className="text-zinc-400">
            ({expires.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })})
          </time>
        </span>
      ) : session.finishedAt ? (
        <span className="text-zinc-400">
          <time dateTime={session.finishedAt}>{formatRelative(session.finishedAt, now)}</time>
        </span>
      ) : null}
      {session.status === 'failed' && session.failureReason ? (
        <p className="basis-full text-red-300" role="alert">
          {session.failureReason}
        </p>
      ) : null}
      {session.status === 'promoted' ? (
        <p className="basis-full text-zinc-300">Setup finished: the terminal closed when the image was captured.</p>
      ) : null}
      {session.status === 'timed_out' ? (
        <p className="basis-full text-zinc-300">The session's time limit ran out. Start a new one to continue.</p>
      ) : null}
    </div>
  );
}
