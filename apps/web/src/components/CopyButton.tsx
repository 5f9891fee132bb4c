import { Check, Copy } from 'lucide-react';
import { useState } from 'react';
import { toast } from 'sonner';

/** Copies `value`; the label says what is copied, for screen readers. */
function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      aria-label={label}
      title={label}
      className="inline-flex shrink-0 items-center rounded border border-zinc-700 bg-zinc-800 p-1.5 text-zinc-200 hover:bg-zinc-700"
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
