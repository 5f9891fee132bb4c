import {
  type ConnectionPayload,
  type CustomImageOverview,
  type CustomImageTemplateBody,
  type EnvironmentBody,
  formatBytes,
  type SetupChanges,
  type SetupSessionBody,
} from '@sandcast/contracts';
import { formatTime, table } from '../../format.ts';

/** One line naming an image: "tpl_1 (snapshot sbx-ref, captured 3 min ago (2025-03-01T09:30:12Z))". */
export function describeTemplate(template: CustomImageTemplateBody): string {
  const ref = template.providerRef ? ` ${template.providerRef}` : '';
  return `${template.id} (${template.kind}${ref}, captured ${formatTime(template.capturedAt)})`;
}

function renderTemplate(template: CustomImageTemplateBody, indent = ''): string {
  const lines = [
    `id:         ${template.id}`,
    `status:     ${template.status}`,
    `kind:       ${template.kind}`,
    `ref:        ${template.providerRef ?? '-'}`,
    `size:       ${formatBytes(template.sizeBytes)}`,
    `captured:   ${formatTime(template.capturedAt)}`,
    `last used:  ${formatTime(template.lastUsedAt, 'never')}`,
  ];
  if (template.refreshedFromTemplateId) lines.push(`refreshed from: ${template.refreshedFromTemplateId}`);
  return lines.map((l) => indent + l).join('\n');
}

/** "ses_1 — Setup running, expires 2025-03-01 10:30:00Z". */
export function describeSession(session: SetupSessionBody): string {
  const active = session.status === 'starting' || session.status === 'waiting_for_user' || session.status === 'capturing';
  const when = active ? `expires ${formatTime(session.expiresAt)}` : `ended ${formatTime(session.finishedAt ?? session.updatedAt)}`;
  const reason = session.failureReason ? ` (${session.failureReason})` : '';
  return `${session.id} — ${session.statusLabel}${reason}, ${when}`;
}

export function renderOverview(environment: EnvironmentBody, overview: CustomImageOverview): string {
  const { capability, activeTemplate } = overview;
  const lines = [`environment:   ${environment.name} (${environment.id}, provider ${environment.provider})`];
  lines.push(`capability:    ${capability.label}${capability.message ? ` — ${capability.message}` : ''}`);
  if (activeTemplate) {
    lines.push('active image:', renderTemplate(activeTemplate, '  '));
    if (overview.activeTemplateMatchesConfig === false) {
      const paths = overview.activeTemplateDrift?.paths ?? [];
      lines.push(
        `  matches config: no — the boot source changed (${paths.length ? paths.join(', ') : 'unknown fields'}); runs use the base provider configuration`,
        `  to use it again: sandcast image relink ${environment.name} --confirm-boot-source-drift`,
      );
    } else {
      lines.push('  matches config: yes — runs boot from it');
    }
  } else {
    lines.push('active image:  none — runs use the base provider configuration');
  }
  lines.push(`setup session: ${overview.activeSession ? describeSession(overview.activeSession) : 'none running'}`);
  if (overview.latestSession && overview.latestSession.id !== overview.activeSession?.id) {
    lines.push(`last session:  ${describeSession(overview.latestSession)}`);
  }
  return lines.join('\n');
}

export function renderHistory(templates: CustomImageTemplateBody[]): string {
  return table(
    ['ID', 'STATUS', 'KIND', 'REF', 'SIZE', 'CAPTURED', 'LAST USED'],
    templates.map((t) => [
      t.id,
      t.status,
      t.kind,
      t.providerRef ?? '-',
      formatBytes(t.sizeBytes),
      formatTime(t.capturedAt),
      formatTime(t.lastUsedAt, 'never'),
    ]),
  );
}

export function renderChanges(changes: SetupChanges): string {
  const lines = [
    table(
      ['CHANGE', 'TYPE', 'SIZE', 'PATH'],
      changes.changes.map((c) => [c.kind, c.type, c.kind === 'deleted' ? '-' : formatBytes(c.sizeBytes), c.path]),
    ),
    `${changes.changes.length} change${changes.changes.length === 1 ? '' : 's'}, ${formatBytes(changes.totalBytes)}${changes.truncated ? ' (list cut at the limit)' : ''}`,
  ];
  if (changes.warnings.length) lines.push('', renderSecretWarnings(changes.warnings));
  return lines.join('\n');
}

/** The review's likely secrets as `path:line: kind` lines; never the secret itself (the server does not send it). */
export function renderSecretWarnings(warnings: SetupChanges['warnings']): string {
  return [
    'Warning: these look like secrets and would be baked into the image:',
    ...warnings.map((w) => `  ${w.path}${w.line === undefined ? '' : `:${w.line}`}: ${w.reason}`),
  ].join('\n');
}

/** How to reach the setup sandbox, in words. */
export function renderConnection(environment: EnvironmentBody, session: SetupSessionBody, payload: ConnectionPayload | null): string {
  const lines = [`Setup session ${session.id} for ${environment.name}: ${session.statusLabel}, expires ${formatTime(session.expiresAt)}.`];
  if (session.sourceTemplateId) lines.push(`It starts from image ${session.sourceTemplateId} (Refresh).`);
  else lines.push('It starts from the base provider configuration.');
  if (payload === null) {
    lines.push('No connection details are available for this session.');
  } else {
    switch (payload.type) {
      case 'pty':
        lines.push(
          'Connect with the browser terminal on the environment’s page in the Sandcast UI,',
          `or run commands in it from here: sandcast image exec ${environment.name} -- <command…>`,
        );
        break;
      case 'ssh':
        lines.push('Connect with ssh:', '', `  ${payload.command}`, '');
        if (payload.token) lines.push(`Password: ${payload.token} (valid until ${formatTime(payload.expiresAt)})`);
        lines.push(`You can also run commands from here: sandcast image exec ${environment.name} -- <command…>`);
        break;
    }
  }
  lines.push(`See what changed so far: sandcast image changes ${environment.name}`);
  return lines.join('\n');
}
