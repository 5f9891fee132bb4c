import '@xterm/xterm/css/xterm.css';
import { openTerminal, SandcastApiError, type TerminalConnection } from '@sandcast/client';
import type { TerminalCloseReason, TerminalSessionTokenAnswer } from '@sandcast/contracts';
import type { FitAddon } from '@xterm/addon-fit';
import type { Terminal } from '@xterm/xterm';
import { Plug, PlugZap, RotateCw, Unplug } from 'lucide-react';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useClient } from '../../api/client-context.tsx';
import { errorMessage } from '../../api/errors.ts';
import { Button } from '../../components/Button.tsx';
import { Spinner } from '../../components/States.tsx';
import { CLOSE_REASON_WORDS } from './close-reasons.ts';

export type TerminalState =
  | { kind: 'idle' }
  | { kind: 'connecting' }
  | { kind: 'connected' }
  | { kind: 'closed'; reason: string; code?: TerminalCloseReason }
  | { kind: 'failed'; message: string };

const STATE_LABEL: Record<TerminalState['kind'], string> = {
  idle: 'Ready to connect',
  connecting: 'Connecting',
  connected: 'Connected',
  closed: 'Closed',
  failed: 'Connection failed',
};

const STATE_DOT: Record<TerminalState['kind'], string> = {
  idle: 'bg-zinc-400',
  connecting: 'bg-sky-400',
  connected: 'bg-emerald-400',
  closed: 'bg-zinc-500',
  failed: 'bg-red-400',
};

/** The height the operator dragged the terminal to survives a reload (it is not secret). */
const HEIGHT_KEY = 'sandcast.terminal.height';
const DEFAULT_HEIGHT = 340;

function savedHeight(): number {
  const raw = Number(globalThis.localStorage?.getItem(HEIGHT_KEY));
  return Number.isFinite(raw) && raw >= 160 && raw <= 2000 ? raw : DEFAULT_HEIGHT;
}

/**
 * Whose shell the terminal attaches to: a custom image setup session's sandbox, or an agent
 * session's primary sandbox. Each issues its own connect token, which names the socket path.
 */
export interface TerminalTarget {
  kind: 'setup' | 'session';
  id: string;
}

const TARGET_WORDS: Record<TerminalTarget['kind'], { shell: string; keepsRunning: string }> = {
  setup: { shell: 'Setup sandbox shell', keepsRunning: 'The shell keeps running until the setup session ends.' },
  session: { shell: 'Session sandbox shell', keepsRunning: 'The shell keeps running until the sandbox stops.' },
};

/**
 * xterm.js attached to a sandbox's shell over the terminal WebSocket: a connect token over
 * REST, the socket without credentials in its URL, the token in the first frame. The header says
 * plainly whether it is connected and, when it is not, why.
 */
export function BrowserTerminal({
  target,
  autoOpen,
  onUnavailable,
  capturing = false,
  onOutput,
}: {
  target: TerminalTarget;
  /** Open as soon as it mounts (the session is running). */
  autoOpen: boolean;
  /** Called when this provider connection has no browser terminal. */
  onUnavailable: () => void;
  /** The image is being captured: the shell is gone for good, so nothing invites a reconnect. */
  capturing?: boolean;
  /** Called for every chunk the shell prints (the capture review refreshes when it goes quiet). */
  onOutput?: () => void;
}) {
  const client = useClient();
  const [state, setState] = useState<TerminalState>({ kind: 'idle' });
  const hostRef = useRef<HTMLDivElement>(null);
  const termRef = useRef<{ term: Terminal; fit: FitAddon } | null>(null);
  const socketRef = useRef<TerminalConnection | null>(null);
  const userClosedRef = useRef(false);
  const onUnavailableRef = useRef(onUnavailable);
  onUnavailableRef.current = onUnavailable;
  const onOutputRef = useRef(onOutput);
  onOutputRef.current = onOutput;

  // The xterm instance lives as long as the component; sockets come and go.
  useEffect(() => {
    let disposed = false;
    let observer: ResizeObserver | undefined;
    void (async () => {
      const [{ Terminal }, { FitAddon }] = await Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit')]);
      if (disposed || !hostRef.current) return;
      const term = new Terminal({
        cursorBlink: true,
        fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
        fontSize: 13,
        theme: { background: '#09090b', foreground: '#e4e4e7', cursor: '#5eead4' },
        scrollback: 5000,
      });
      const fit = new FitAddon();
      term.loadAddon(fit);
      term.open(hostRef.current);
      termRef.current = { term, fit };
      term.onData((data) => socketRef.current?.input(data));
      term.onResize(({ cols, rows }) => socketRef.current?.resize(cols, rows));
      const refit = () => {
        try {
          fit.fit();
        } catch {
          // not laid out yet
        }
      };
      refit();
      observer = new ResizeObserver(() => {
        refit();
        const height = hostRef.current?.parentElement?.getBoundingClientRect().height;
        if (height) globalThis.localStorage?.setItem(HEIGHT_KEY, String(Math.round(height)));
      });
      observer.observe(hostRef.current.parentElement ?? hostRef.current);
    })();
    return () => {
      disposed = true;
      observer?.disconnect();
      termRef.current?.term.dispose();
      termRef.current = null;
    };
  }, []);

  const open = useCallback(async () => {
    const previous = socketRef.current;
    socketRef.current = null;
    previous?.close();
    userClosedRef.current = false;
    setState({ kind: 'connecting' });
    let token: Pick<TerminalSessionTokenAnswer, 'token' | 'websocketPath'>;
    try {
      token =
        target.kind === 'setup' ? await client.customImages.terminalSessionToken(target.id) : await client.sessions.ptyToken(target.id);
    } catch (error) {
      if (error instanceof SandcastApiError && (error.code === 'capability_unsupported' || error.status === 404)) {
        setState({ kind: 'idle' });
        onUnavailableRef.current();
        return;
      }
      setState({ kind: 'failed', message: errorMessage(error) });
      return;
    }
    const term = termRef.current?.term;
    let settled = false;
    let connection: TerminalConnection;
    // Callbacks of a connection that was replaced (Reconnect) or left are ignored.
    const current = () => socketRef.current === connection;
    try {
      connection = openTerminal({
        baseUrl: client.baseUrl,
        token,
        cols: term?.cols ?? 100,
        rows: term?.rows ?? 24,
        onReady: () => {
          if (!current()) return;
          setState({ kind: 'connected' });
          const t = termRef.current?.term;
          t?.focus();
          if (t) connection.resize(t.cols, t.rows);
        },
        onOutput: (bytes) => {
          if (!current()) return;
          termRef.current?.term.write(bytes);
          onOutputRef.current?.();
        },
        onError: (message) => {
          if (!current()) return;
          settled = true;
          setState({ kind: 'failed', message });
        },
        onClosed: (reason) => {
          if (!current()) return;
          settled = true;
          setState({ kind: 'closed', reason: CLOSE_REASON_WORDS[reason], code: reason });
        },
        onSocketClose: (event) => {
          if (!current()) return;
          socketRef.current = null;
          if (settled) return;
          if (userClosedRef.current) setState({ kind: 'closed', reason: `You disconnected. ${TARGET_WORDS[target.kind].keepsRunning}` });
          else
            setState((previousState) =>
              previousState.kind === 'connected'
                ? {
                    kind: 'closed',
                    reason: `The connection was lost${event.reason ? `: ${event.reason}` : ''}. Reconnect to pick up where you left off.`,
                  }
                : {
                    kind: 'failed',
                    message:
                      event.reason || 'The terminal connection could not be opened. Check that the server is reachable, then reconnect.',
                  },
            );
        },
      });
    } catch (error) {
      setState({ kind: 'failed', message: errorMessage(error) });
      return;
    }
    socketRef.current = connection;
  }, [client, target.kind, target.id]);

  const disconnect = useCallback(() => {
    userClosedRef.current = true;
    socketRef.current?.close();
  }, []);

  const openRef = useRef(open);
  openRef.current = open;
  useEffect(() => {
    if (autoOpen) void openRef.current();
    return () => {
      userClosedRef.current = true;
      const connection = socketRef.current;
      socketRef.current = null;
      connection?.close();
    };
  }, [autoOpen]);

  // A capture ends the shell for good; so does a finished setup. Neither is worth a reconnect.
  const ended = capturing || (state.kind === 'closed' && state.code === 'setup_finished');
  const label = capturing ? 'Closed for the capture' : STATE_LABEL[state.kind];
  const detail = capturing
    ? 'The terminal closed because the image is being captured. It does not reopen: the capture ends this setup session.'
    : state.kind === 'closed'
      ? state.reason
      : state.kind === 'failed'
        ? state.message
        : null;
  return (
    <div className="overflow-hidden rounded-md border border-zinc-700 bg-zinc-950" data-testid="browser-terminal">
      <div className="flex flex-wrap items-center justify-between gap-2 border-b border-zinc-800 bg-zinc-900 px-3 py-2">
        <div className="flex min-w-0 items-center gap-2 text-sm">
          <span className="font-medium text-zinc-100">Browser terminal</span>
          <span className="inline-flex items-center gap-1.5 text-zinc-300" role="status" aria-live="polite" data-testid="terminal-state">
            {state.kind === 'connecting' && !capturing ? (
              <Spinner className="size-3" />
            ) : (
              <span aria-hidden className={`size-2 rounded-full ${capturing ? STATE_DOT.closed : STATE_DOT[state.kind]}`} />
            )}
            {label}
          </span>
        </div>
        <div className="flex items-center gap-2">
          {ended ? null : state.kind === 'connected' ? (
            <Button size="sm" onClick={disconnect} icon={<Unplug aria-hidden className="size-3.5" />}>
              Disconnect
            </Button>
          ) : (
            <Button
              size="sm"
              variant="primary"
              disabled={state.kind === 'connecting'}
              onClick={() => void open()}
              icon={
                state.kind === 'idle' ? (
                  <Plug aria-hidden className="size-3.5" />
                ) : state.kind === 'connecting' ? (
                  <PlugZap aria-hidden className="size-3.5" />
                ) : (
                  <RotateCw aria-hidden className="size-3.5" />
                )
              }
            >
              {state.kind === 'idle' || state.kind === 'connecting' ? 'Open terminal' : 'Reconnect'}
            </Button>
          )}
        </div>
      </div>
      {detail ? (
        <p
          className={`border-b border-zinc-800 px-3 py-1.5 text-xs ${state.kind === 'failed' ? 'text-red-300' : 'text-zinc-300'}`}
          data-testid="terminal-detail"
        >
          {detail}
        </p>
      ) : null}
      <div className="resize-y overflow-hidden" style={{ height: savedHeight(), minHeight: 160 }}>
        <div ref={hostRef} className="h-full w-full" aria-label={TARGET_WORDS[target.kind].shell} role="application" />
      </div>
    </div>
  );
}
