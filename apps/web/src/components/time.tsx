import { useEffect, useState } from 'react';

/** Re-renders every `ms` while mounted (for clocks and elapsed times). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/** "12 s", "3 min 4 s", "1 h 2 min". */
function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** "3 min ago", "in 58 min". */
export function formatRelative(iso: string, now: number = Date.now()): string {
  const diff = Date.parse(iso) - now;
  const abs = Math.abs(diff);
  const words =
    abs < 45_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 3_600_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 86_400_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} d`;
  return diff >= 0 ? `in ${words}` : `${words} ago`;
}

/**
 * A timestamp people can read, with the exact instant (to the second) on hover and for machines.
 * Relative times tick, so two captures a few seconds apart never read alike.
 */
export function Time({ iso, relative = false }: { iso: string; relative?: boolean }) {
  const now = useNow(relative ? 15_000 : 3_600_000);
  const date = new Date(iso);
  const exact = date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  return (
    <time dateTime={iso} title={exact}>
      {relative ? formatRelative(iso, now) : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
    </time>
  );
}

/** "Capturing template… 12 s": how long something has been running. */
export function Elapsed({ since }: { since: number }) {
  const now = useNow(1000);
  return <span className="tabular-nums">{formatDuration(now - since)}</span>;
}
