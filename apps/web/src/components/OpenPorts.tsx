import type { OpenPort, OpenPortBody, PortUrl } from '@sandcast/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link2, X } from 'lucide-react';
import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { toast } from 'sonner';
import { errorMessage } from '../api/errors.ts';
import { Button } from './Button.tsx';
import { CopyableCode } from './CopyButton.tsx';
import { ErrorState } from './States.tsx';

/** The client's port calls of one kind of owner (`client.sandboxes.ports`, `client.customImages.ports`). */
export interface PortsApi {
  list(ownerId: string): Promise<OpenPort[]>;
  open(ownerId: string, body: OpenPortBody): Promise<unknown>;
  url(ownerId: string, port: number): Promise<PortUrl>;
  close(ownerId: string, port: number): Promise<unknown>;
}

/**
 * The open ports of a sandbox or a setup session's sandbox, with their URLs: open one, copy its
 * address or a link with a token (private ports), close it.
 */
export function OpenPorts({
  api,
  ownerId,
  queryKey,
  hint,
}: {
  api: PortsApi;
  ownerId: string;
  queryKey: readonly unknown[];
  /** A line under the heading, e.g. when the ports close. */
  hint?: ReactNode;
}) {
  const queryClient = useQueryClient();
  const inputId = useId();
  const [port, setPort] = useState('');
  const ports = useQuery({ queryKey, queryFn: () => api.list(ownerId) });
  const refresh = () => queryClient.invalidateQueries({ queryKey });
  const open = useMutation({
    mutationFn: (value: number) => api.open(ownerId, { port: value }),
    onSuccess: () => setPort(''),
    onError: (error) => toast.error('The port was not opened', { description: errorMessage(error) }),
    onSettled: refresh,
  });
  const close = useMutation({
    mutationFn: (value: number) => api.close(ownerId, value),
    onError: (error) => toast.error('The port was not closed', { description: errorMessage(error) }),
    onSettled: refresh,
  });
  const copyLink = async (entry: OpenPort) => {
    try {
      const { url } = await api.url(ownerId, entry.port);
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
    <div className="space-y-2" data-testid="open-ports">
      <h3 className="text-sm font-medium text-zinc-100">Ports</h3>
      {hint ? <p className="text-xs text-zinc-400">{hint}</p> : null}
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
          Port to open in {ownerId}
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
