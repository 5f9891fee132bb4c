import type { SandboxPort } from '@sandcast/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link2, X } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { toast } from 'sonner';
import { useClient } from '../../api/client-context.tsx';
import { errorMessage } from '../../api/errors.ts';
import { Button } from '../../components/Button.tsx';
import { CopyableCode } from '../../components/CopyButton.tsx';
import { ErrorState } from '../../components/States.tsx';

const portsKey = (sandboxId: string) => ['sandboxes', sandboxId, 'ports'] as const;

/** A running sandbox's open ports with their URLs: open one, copy its link (with a token when private), close it. */
export function SandboxPorts({ sandboxId }: { sandboxId: string }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const inputId = useId();
  const [port, setPort] = useState('');
  const ports = useQuery({ queryKey: portsKey(sandboxId), queryFn: () => client.sandboxes.ports.list(sandboxId) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: portsKey(sandboxId) });
  const open = useMutation({
    mutationFn: (value: number) => client.sandboxes.ports.open(sandboxId, { port: value }),
    onSuccess: () => setPort(''),
    onError: (error) => toast.error('The port was not opened', { description: errorMessage(error) }),
    onSettled: refresh,
  });
  const close = useMutation({
    mutationFn: (value: number) => client.sandboxes.ports.close(sandboxId, value),
    onError: (error) => toast.error('The port was not closed', { description: errorMessage(error) }),
    onSettled: refresh,
  });
  const copyLink = async (entry: SandboxPort) => {
    try {
      const { url } = await client.sandboxes.ports.url(sandboxId, entry.port);
      await navigator.clipboard.writeText(url);
      toast.success(`Link to port ${entry.port} copied`, {
        description: 'It carries a token valid for an hour; open it once in a browser.',
      });
    } catch (error) {
      toast.error('The link was not copied', { description: errorMessage(error) });
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const value = Number(port);
    if (Number.isInteger(value) && value >= 1 && value <= 65535) open.mutate(value);
    else toast.error('A port is a whole number from 1 to 65535');
  };
  return (
    <div className="space-y-2" data-testid="sandbox-ports">
      <h3 className="text-sm font-medium text-zinc-100">Ports</h3>
      {ports.isError ? <ErrorState error={ports.error} onRetry={() => ports.refetch()} /> : null}
      {ports.data && ports.data.length > 0 ? (
        <ul className="space-y-1.5">
          {ports.data.map((entry) => (
            <li key={entry.port} className="flex items-center gap-2 text-sm">
              <span className="w-14 font-mono text-zinc-100">{entry.port}</span>
              <span className="w-14 text-xs text-zinc-400">{entry.visibility}</span>
              <div className="min-w-0 flex-1">
                <CopyableCode value={entry.baseUrl} label={`Copy the URL of port ${entry.port}`} />
              </div>
              {entry.visibility === 'private' ? (
                <Button size="sm" icon={<Link2 aria-hidden className="size-3.5" />} onClick={() => void copyLink(entry)}>
                  Copy link with token
                </Button>
              ) : null}
              <Button
                size="sm"
                icon={<X aria-hidden className="size-3.5" />}
                aria-label={`Close port ${entry.port}`}
                onClick={() => close.mutate(entry.port)}
              >
                Close
              </Button>
            </li>
          ))}
        </ul>
      ) : ports.data ? (
        <p className="text-xs text-zinc-400">No open ports. Open one a server inside the sandbox listens on to get a URL for it.</p>
      ) : null}
      <form onSubmit={submit} className="flex items-center gap-2">
        <label htmlFor={inputId} className="sr-only">
          Port to open in {sandboxId}
        </label>
        <input
          id={inputId}
          inputMode="numeric"
          value={port}
          onChange={(e) => setPort(e.target.value)}
          placeholder="3000"
          className="w-24 rounded-md border border-zinc-700 bg-zinc-950 px-2.5 py-1.5 text-sm text-zinc-100"
        />
        <Button type="submit" size="sm" disabled={open.isPending || !port}>
          Open port
        </Button>
      </form>
    </div>
  );
}
