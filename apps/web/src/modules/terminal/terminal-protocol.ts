import type { SandcastClient } from '@sandcast/client';
import { z } from 'zod';

// The browser terminal's wire protocol (ARCHITECTURE §6, docs/spec/ws-terminal.md). These are
// the frames the UI sends and reads; the shared zod schemas in @sandcast/contracts replace them
// as soon as the terminal contracts are exported there.

export type TerminalCloseReason = 'expired' | 'ssh_closed' | 'setup_finished' | 'setup_cancelled' | 'server_shutdown';

export type TerminalServerFrame =
  | { type: 'ready'; terminalSessionId?: string; reattached?: boolean; replayBytes?: number }
  | { type: 'output'; data: string }
  | { type: 'error'; message: string }
  | { type: 'closed'; reason: TerminalCloseReason };

export type TerminalClientFrame =
  | { type: 'auth'; token: string }
  | { type: 'input'; data: string }
  | { type: 'resize'; cols: number; rows: number };

export interface TerminalToken {
  id: string;
  token: string;
  expiresAt: string;
  websocketPath: string;
  connectionType: 'pty' | 'ssh';
}

/** Close reasons in the operator's words. */
export const CLOSE_REASON_WORDS: Record<TerminalCloseReason, string> = {
  expired: 'The setup session expired.',
  ssh_closed: 'The SSH connection to the setup sandbox closed.',
  setup_finished: 'Setup finished: the terminal closed when the image was captured.',
  setup_cancelled: 'The setup session was cancelled.',
  server_shutdown: 'The Sandcast server shut down. Reconnect when it is back.',
};

export function parseServerFrame(text: string): TerminalServerFrame | null {
  try {
    const frame = JSON.parse(text) as { type?: unknown };
    switch (frame.type) {
      case 'ready':
      case 'output':
      case 'error':
      case 'closed':
        return frame as TerminalServerFrame;
      default:
        return null;
    }
  } catch {
    return null;
  }
}

const TokenSchema = z.object({
  id: z.string(),
  token: z.string(),
  expiresAt: z.string(),
  websocketPath: z.string(),
  connectionType: z.enum(['pty', 'ssh']),
});

/** Asks the server for a single-use connect token for this setup session's terminal. */
export async function requestTerminalToken(client: SandcastClient, sessionId: string): Promise<TerminalToken> {
  return client.request(
    'POST',
    `/api/environment-custom-image-setup-sessions/${encodeURIComponent(sessionId)}/terminal-session-token`,
    TokenSchema,
    {
      body: {},
    },
  );
}

/** ws(s)://host + the path the server named, with the terminal's size. No credential in the URL. */
export function websocketUrl(base: string, websocketPath: string, cols: number, rows: number): string {
  const url = new URL(websocketPath, base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('cols', String(cols));
  url.searchParams.set('rows', String(rows));
  return url.toString();
}
