import type { FleetSandboxBody } from '@sandcast/contracts';
import { formatTime, table } from '../../format.ts';

/** A session's resource sandboxes, one line each. */
export function renderFleetList(sandboxes: FleetSandboxBody[]): string {
  if (sandboxes.length === 0) return 'No resource sandboxes in this session — create one with `sandcast fleet create <session>`.';
  return table(
    ['ID', 'BINDING', 'REVISION', 'STATE', 'WANTED', 'GEN', 'LAST ACTIVITY'],
    sandboxes.map((s) => [
      s.id,
      s.bindingName ?? '-',
      s.environmentRevisionNumber === null ? '-' : `rev ${s.environmentRevisionNumber}`,
      s.observedState,
      s.desiredState,
      String(s.generation),
      formatTime(s.lastActivityAt),
    ]),
  );
}

/** One resource sandbox, field by field. */
export function renderFleetSandbox(s: FleetSandboxBody): string {
  return [
    `id:          ${s.id}`,
    `session:     ${s.sessionId}`,
    `binding:     ${s.bindingName ?? '-'} (${s.target.provider}, revision ${s.environmentRevisionNumber ?? '?'})`,
    `state:       ${s.observedState} (wanted: ${s.desiredState})${s.failureReason ? ` — ${s.failureReason}` : ''}`,
    `generation:  ${s.generation}`,
    `durability:  ${s.durability}`,
    `reserves:    ${s.reservation.cpu} CPU, ${s.reservation.memoryMb} MiB`,
    `checkpoint:  ${s.lastCheckpointId ?? '-'}`,
  ].join('\n');
}
