/** Renders rows as an aligned plain-text table. */
export function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** Commander's parser for an option that may be given more than once: its values, in order. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** A text flag's value for the API: "" clears the field (null), absent leaves it (undefined). */
export const clearable = (value: string | undefined): string | null | undefined => (value === '' ? null : value);

/** Parses a command-line value: JSON when it parses (true, 3, {"a":1}), else the plain string. */
export function parseValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** Applies `a.b.c=value` assignments onto a copy of `base`; `flag` names the option they came from. */
export function applyAssignments(base: Record<string, unknown>, assignments: string[], flag = '--set'): Record<string, unknown> {
  const out = structuredClone(base);
  for (const assignment of assignments) {
    const eq = assignment.indexOf('=');
    if (eq <= 0) throw new UsageError(`${flag} takes key=value, got "${assignment}"`);
    setPath(out, assignment.slice(0, eq), parseValue(assignment.slice(eq + 1)));
  }
  return out;
}

export function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  const last = keys.pop()!;
  let node = target;
  for (const key of keys) {
    if (!node[key] || typeof node[key] !== 'object') node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[last] = value;
}

/** A mistake in how the command was called; exits with status 2. */
export class UsageError extends Error {}

/**
 * Every time the CLI prints, in one style: relative, then exact to the second in UTC —
 * "3 min ago (2025-03-01T09:30:12Z)", "in 59 min (…)". `fallback` when there is none.
 */
export function formatTime(iso: string | null | undefined, fallback = '-', now = Date.now()): string {
  if (!iso) return fallback;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const exact = `${date.toISOString().slice(0, 19)}Z`;
  const seconds = Math.round((date.getTime() - now) / 1000);
  const span = Math.abs(seconds);
  const amount =
    span < 45
      ? `${span} s`
      : span < 45 * 60
        ? `${Math.round(span / 60)} min`
        : span < 36 * 3600
          ? `${Math.round(span / 3600)} h`
          : `${Math.round(span / 86_400)} d`;
  const relative = span < 1 ? 'just now' : seconds < 0 ? `${amount} ago` : `in ${amount}`;
  return `${relative} (${exact})`;
}

/** The command ran but could not do what was asked (a session that expired meanwhile, a failed probe); exits with status 1. */
export class CommandFailed extends Error {}
