import { Check, Copy } from 'lucide-react';
import { useState } from 'react';
import { toast } from 'sonner';

/** Copies `value`; the label says what is copied, for screen readers. */
function CopyButton({ value, label, compact = false }: { value: string; label: string; compact?: boolean }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      aria-label={label}
      title={label}
      className={`inline-flex shrink-0 items-center rounded text-zinc-200 ${
        compact ? 'p-1 text-zinc-400 hover:bg-zinc-800 hover:text-zinc-100' : 'border border-zinc-700 bg-zinc-800 p-1.5 hover:bg-zinc-700'
      }`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        } catch {
          toast.error('Copy failed: select the text and copy it by hand.');
        }
      }}
    >
      {copied ? <Check aria-hidden className="size-3.5 text-teal-300" /> : <Copy aria-hidden className="size-3.5" />}
    </button>
  );
}

/**
 * An id or ref inline with the text around it: compact monospace, cut with an ellipsis when the
 * line is short (the whole value is on hover), and a small copy button.
 */
export function CopyableId({ value, label, className = '' }: { value: string; label: string; className?: string }) {
  return (
    <span className={`inline-flex max-w-full min-w-0 items-center gap-0.5 align-middle ${className}`}>
      <code className="min-w-0 truncate font-mono text-xs text-zinc-200" title={value}>
        {value}
      </code>
      <CopyButton value={value} label={label} compact />
    </span>
  );
}

/** A monospace value with its copy button. */
export function CopyableCode({ value, label }: { value: string; label: string }) {
  return (
    <div className="flex min-w-0 items-center gap-2">
      <code className="min-w-0 flex-1 overflow-x-auto whitespace-nowrap rounded bg-zinc-950 px-2 py-1 font-mono text-xs text-zinc-200">
        {value}
      </code>
      <CopyButton value={value} label={label} />
    </div>
  );
}
