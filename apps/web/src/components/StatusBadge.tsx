type Tone = 'neutral' | 'running' | 'active' | 'failed' | 'warning' | 'muted';

const TONES: Record<Tone, string> = {
  neutral: 'border-zinc-600 bg-zinc-800 text-zinc-200',
  running: 'border-sky-700 bg-sky-950 text-sky-200',
  active: 'border-emerald-700 bg-emerald-950 text-emerald-200',
  failed: 'border-red-700 bg-red-950 text-red-200',
  warning: 'border-amber-700 bg-amber-950 text-amber-200',
  muted: 'border-zinc-700 bg-zinc-900 text-zinc-300',
};

/** Status colours are for status only. */
export function StatusBadge({ tone, children }: { tone: Tone; children: string }) {
  return <span className={`inline-flex items-center rounded-full border px-2 py-0.5 text-xs font-medium ${TONES[tone]}`}>{children}</span>;
}

export type { Tone as StatusTone };
