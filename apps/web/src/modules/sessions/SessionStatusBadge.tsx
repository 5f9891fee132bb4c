import type { SessionBody } from '@sandcast/contracts';
import { StatusBadge, type StatusTone } from '../../components/StatusBadge.tsx';

const SESSION_TONE: Record<SessionBody['status'], StatusTone> = { active: 'active', ended: 'muted' };

export function SessionStatusBadge({ status }: { status: SessionBody['status'] }) {
  return <StatusBadge tone={SESSION_TONE[status]}>{status}</StatusBadge>;
}
