import type { SandcastApiError, SandcastApiErrorCode } from '@sandcast/client';
import { SETUP_SESSION_LABELS } from '@sandcast/contracts';

/**
 * The one place an API error becomes CLI words: API routes in messages become the commands that do
 * the same, request fields become the flags that set them, setup session states read as the UI
 * names them, and each code adds what to do next on the command line.
 */
export function describeApiError(error: Pick<SandcastApiError, 'code' | 'message' | 'details'>): string[] {
  const issues = issuesOf(error.details);
  // The request-schema refusal ("invalid request body: ttlSeconds: …") is its first issue, said better in flags.
  const generic = /^invalid request (body|query|params): /.test(error.message) && issues.length > 0;
  // A message that ends with its first issue ("the one-off spec is refused: sandbox.inline: …") says it in flags, once.
  const first = issues[0] ? `${issues[0].path}: ${issues[0].message}` : undefined;
  const embedded = !generic && first !== undefined && error.message.endsWith(first);
  const message = generic
    ? issueWords(issues[0]!)
    : embedded
      ? `${toCliWords(error.message.slice(0, -first.length))}${issueWords(issues[0]!)}`
      : toCliWords(error.message);
  const lines = [`${message} (${error.code})`];
  for (const issue of issues.slice(generic || embedded ? 1 : 0)) lines.push(`  ${issueWords(issue)}`);
  const reason = typeof error.details?.reason === 'string' ? error.details.reason : undefined;
  const hint =
    (reason !== undefined && Object.hasOwn(REASON_HINTS, reason) ? REASON_HINTS[reason] : undefined) ??
    MESSAGE_HINTS.find(([pattern]) => pattern.test(error.message))?.[1] ??
    HINTS[error.code];
  if (hint && !message.includes(hint)) lines.push(hint);
  return lines;
}

/** What each code means to someone at a shell, when the message alone does not say it. */
const HINTS: Record<SandcastApiErrorCode, string | null> = {
  bad_request: null,
  validation_failed: null,
  unauthorized:
    'Pass an API key with --api-key or SANDCAST_API_KEY (an authenticated server writes its first admin key to <data dir>/admin-api-key).',
  forbidden: null,
  feature_disabled: null,
  host_not_allowed: 'Point --url (or SANDCAST_URL) at a name the server answers for.',
  not_found: null,
  conflict: null,
  invalid_transition: null,
  payload_too_large: null,
  unsupported_media_type: null,
  not_acceptable: null,
  method_not_allowed: null,
  capability_unsupported: '`sandcast targets` lists what each provider can do.',
  unprocessable: null,
  provider_unavailable: '`sandcast targets` shows which providers can run here, and why not.',
  provider_error: null,
  compute_lost:
    'End it with `sandcast session end <session>` and start a new one; an environment with durability `checkpointed` survives this.',
  internal: 'The server log has the details.',
  http_error: 'Is --url (or SANDCAST_URL) a Sandcast server?',
};

/** Situations a message names, and the commands out of them. */
const MESSAGE_HINTS: Array<[RegExp, string]> = [
  [/setup session is already/, 'Finish it with `sandcast image finish <env>`, or cancel it with `sandcast image cancel <env>`.'],
  [
    /\bis stopped; .*start it first/,
    'Start it again with `sandcast sandbox start <sandbox>` (a session’s sandbox: `sandcast session resume <session>`).',
  ],
];

/** Why a session start was refused (`details.reason`), and what to do about it at a shell. */
const REASON_HINTS: Record<string, string> = {
  fixed_policy:
    'The agent fixes its sandbox: start the session without --use or --inline-config (`sandcast agent show <agent>` shows which one it gets).',
  no_sandbox: 'The agent runs without a sandbox: start the session without --use or --inline-config.',
  inline_not_allowed:
    'One-off settings (--inline-…) need a configurable agent (`sandcast agent update <agent> --mode configurable`); --use picks one of its bindings.',
  unknown_binding: '`sandcast agent show <agent>` lists its bindings.',
};

/** API routes named in server messages, and the command that does the same (ids carried over). */
const ROUTE_COMMANDS: Array<[RegExp, string]> = [
  [/`?GET \/api\/sandbox-targets`?/g, '`sandcast targets`'],
  [/`?GET \/api\/environments\/:id\/revisions`?/g, '`sandcast env revisions <env>`'],
  [/`?GET \/api\/environments\/([\w-]+)\/revisions`?/g, '`sandcast env revisions $1`'],
  [/`?GET \/api\/environments`?/g, '`sandcast env list`'],
  [/`?GET \/api\/keys`?/g, '`sandcast keys list`'],
  [/`?POST \/api\/sandboxes\/([\w-]+)\/(stop|start)`?/g, '`sandcast sandbox $2 $1`'],
  [/`?GET \/api\/sandboxes`?/g, '`sandcast sandbox list`'],
  [/`?GET \/api\/agents\/([\w-]+)`?/g, '`sandcast agent show $1`'],
  [/`?GET \/api\/agents`?/g, '`sandcast agent list`'],
  [/`?POST \/api\/sessions\/([\w-]+)\/sandbox\/stop`?/g, '`sandcast session stop $1`'],
  [/`?POST \/api\/sessions\/([\w-]+)\/sandbox\/start`?/g, '`sandcast session resume $1`'],
  [/`?GET \/api\/sessions\/([\w-]+)\/sandbox`?/g, '`sandcast session sandbox $1`'],
  [/`?POST \/api\/sessions\/([\w-]+)\/end`?/g, '`sandcast session end $1`'],
  [/`?GET \/api\/sessions`?/g, '`sandcast session list`'],
  // The JSON a session start would send, as the flag that sends it.
  [/\{\s*"use":\s*"?([\w-]+)"?\s*\}/g, '--use $1'],
  [/\ban admin sets (sessions\.\w+)/g, 'an admin sets it with `sandcast settings set $1 …`'],
];

/** Request fields the CLI sends, and the flag (or argument) a user sets them with. */
const FIELD_FLAGS: Record<string, string> = {
  ttlSeconds: '--ttl',
  templateId: '--from',
  reason: '--reason',
  role: '--role',
  provider: '--provider',
  deleteProviderTemplate: '--delete-provider-template',
  confirmBootSourceDrift: '--confirm-boot-source-drift',
  displayName: '--display-name',
  description: '--description',
  'spec.displayName': '--display-name',
  'spec.description': '--description',
  'spec.durability': '--durability',
  'spec.bootstrap': '--bootstrap',
  'spec.lifecycle.idleAfterSeconds': '--idle-after',
  'spec.lifecycle.idleAction': '--idle-action',
  'sandboxPolicy.mode': '--mode',
  'sandboxPolicy.default': '--default',
  'sandboxPolicy.bindings': '--bind',
  capabilities: '--fleet',
  'sandbox.use': '--use',
  'sandbox.inline': '--inline-…',
  'sandbox.inline.use': '--use',
  'sandbox.inline.bootstrap': '--inline-bootstrap',
  'sandbox.inline.lifecycle.idleAfterSeconds': '--inline-idle-after',
  allowedAgentIds: 'the agents',
};

/** Paths under a field that say which one of many: a command of a list, a binding, a config field. */
const FIELD_PATTERNS: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [/^spec\.bootstrap\.(\d+)$/, (m) => `--bootstrap (command ${Number(m[1]) + 1})`],
  [/^sandbox\.inline\.bootstrap\.(\d+)$/, (m) => `--inline-bootstrap (command ${Number(m[1]) + 1})`],
  [/^sandbox\.inline\.config\.(.+)$/, (m) => `--inline-config ${m[1]}=…`],
  [/^sandboxPolicy\.bindings\.([^.]+)\.durability$/, (m) => `--durability-of ${m[1]}=…`],
  [/^sandboxPolicy\.bindings\.([^.]+)(\..*)?$/, (m) => `--bind ${m[1]}=…`],
  [/^config\.(.+)$/, (m) => `--set ${m[1]}=…`],
];

/** The flag (or argument) that sets the request field at `path`, or the path itself. */
function flagFor(path: string): string {
  const exact = Object.hasOwn(FIELD_FLAGS, path) ? FIELD_FLAGS[path] : undefined;
  if (exact) return exact;
  for (const [pattern, words] of FIELD_PATTERNS) {
    const m = pattern.exec(path);
    if (m) return words(m);
  }
  return path;
}

const STATUSES = Object.keys(SETUP_SESSION_LABELS);
// Snake-case states anywhere; plain words (starting, capturing, failed …) only where they name a session's state.
const STATUS_WORDS = new RegExp(
  `\\b(?:${STATUSES.filter((s) => s.includes('_')).join('|')})\\b|(?<=\\b(?:already|session is|is now) )(?:${STATUSES.join('|')})\\b`,
  'g',
);

/** Server prose in CLI words: routes → commands, field names → flags, setup states → their labels. */
function toCliWords(message: string): string {
  let out = message;
  for (const [route, command] of ROUTE_COMMANDS) out = out.replace(route, command);
  out = out
    .replace(STATUS_WORDS, (status) => `"${SETUP_SESSION_LABELS[status as keyof typeof SETUP_SESSION_LABELS]}"`)
    // Messages that already gave the label after the state ("is cancelled (\"Setup cancelled\")") say it once.
    .replace(/"([^"]+)" \("\1"\)/g, '"$1"');
  // Only camelCase names: plain words such as "provider" or "reason" are prose as often as fields.
  for (const [field, flag] of Object.entries(FIELD_FLAGS).filter(([f]) => /^[a-z]+[A-Z]\w*$/.test(f)))
    out = out.replace(new RegExp(`\\b(send |set )?${field}(: true)?\\b`, 'g'), flag);
  return out;
}

interface Issue {
  path: string;
  message: string;
}

function issuesOf(details: Record<string, unknown> | undefined): Issue[] {
  const raw = details?.issues;
  if (!Array.isArray(raw)) return [];
  return raw.filter((i): i is Issue => typeof i?.path === 'string' && typeof i?.message === 'string');
}

/** `ttlSeconds: Too small: expected number to be >=60` → `--ttl must be at least 60`; config fields read as `--set field=…`. */
function issueWords(issue: Issue): string {
  const where = flagFor(issue.path);
  const bound = /^Too (small|big): expected (?:number|int) to be ([<>]=?)(\S+)$/.exec(issue.message);
  if (bound) {
    const [, , op, n] = bound;
    const words = { '>=': 'at least', '>': 'more than', '<=': 'at most', '<': 'less than' }[op!];
    return `${where} must be ${words} ${n}`;
  }
  return `${where}: ${toCliWords(issue.message)}`;
}
