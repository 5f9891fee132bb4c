const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/**
 * A byte count as people read it, the same in the CLI and the UI: binary units, one decimal
 * below 10 (`1.5 KiB`), whole numbers from 10 up (`12 MiB`), exact bytes below 1 KiB (`4 B`).
 * A count that rounds up to 1024 of a unit is shown as `1.0` of the next. Unknown (null,
 * undefined, negative or not finite) gives `unknown`.
 */
export function formatBytes(bytes: number | null | undefined, unknown = '-'): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return unknown;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  const shown = value < 9.95 ? value.toFixed(1) : String(Math.round(value));
  if (shown === '1024' && unit < UNITS.length - 1) return `1.0 ${UNITS[unit + 1]}`;
  return `${shown} ${UNITS[unit]}`;
}
