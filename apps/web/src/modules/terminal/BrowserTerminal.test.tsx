import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeClient, renderWithApi } from '../../test/fake-api.tsx';
import { BrowserTerminal } from './BrowserTerminal.tsx';

const written: string[] = [];
vi.mock('@xterm/xterm', () => ({
  Terminal: class {
    cols = 100;
    rows = 30;
    loadAddon() {}
    open() {}
    onData() {}
    onResize() {}
    focus() {}
    dispose() {}
    write(data: string | Uint8Array) {
      written.push(typeof data === 'string' ? data : new TextDecoder().decode(data));
    }
  },
}));
vi.mock('@xterm/addon-fit', () => ({
  FitAddon: class {
    fit() {}
  },
}));

/** A WebSocket double the test drives: it records frames and lets the test play the server. */
class FakeSocket {
  static last: FakeSocket | null = null;
  readyState = 0;
  binaryType = 'blob';
  sent: unknown[] = [];
  private listeners = new Map<string, ((event: never) => void)[]>();
  constructor(readonly url: string) {
    FakeSocket.last = this;
  }
  addEventListener(type: string, listener: (event: never) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  private emit(type: string, event: unknown) {
    for (const listener of this.listeners.get(type) ?? []) listener(event as never);
  }
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close(code = 1000, reason = '') {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.emit('close', { code, reason });
  }
  serverOpens() {
    this.readyState = 1;
    this.emit('open', {});
  }
  serverSends(frame: unknown) {
    this.emit('message', { data: JSON.stringify(frame) });
  }
}

const TOKEN_ROUTE = 'POST /api/environment-custom-image-setup-sessions/sess_1/terminal-session-token';
const token = {
  status: 201,
  body: {
    id: 'term_1',
    token: 'single-use-token',
    expiresAt: new Date(Date.now() + 300_000).toISOString(),
    setupSessionId: 'sess_1',
    environmentId: 'env_1',
    connectionType: 'pty',
    websocketPath: '/api/environment-custom-image-setup-sessions/sess_1/terminal/ws?terminalSessionId=term_1',
  },
};

beforeEach(() => {
  written.length = 0;
  FakeSocket.last = null;
  vi.stubGlobal('WebSocket', FakeSocket);
});
afterEach(() => vi.unstubAllGlobals());

const state = () => screen.getByTestId('terminal-state').textContent;

/** A terminal whose session the test moves into capture, as the panel does. */
function Harness() {
  const [capturing, setCapturing] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setCapturing(true)}>
        capture
      </button>
      <BrowserTerminal target={{ kind: 'setup', id: 'sess_1' }} autoOpen capturing={capturing} onUnavailable={() => {}} />
    </>
  );
}

describe('Browser terminal', () => {
  it('Ready to connect → Connecting → Connected; the token goes only in the first frame; output is written', async () => {
    const api = fakeClient({ [TOKEN_ROUTE]: token });
    renderWithApi(<BrowserTerminal target={{ kind: 'setup', id: 'sess_1' }} autoOpen={false} onUnavailable={() => {}} />, api.client);
    expect(state()).toBe('Ready to connect');
    await userEvent.click(screen.getByRole('button', { name: 'Open terminal' }));
    await waitFor(() => expect(FakeSocket.last).not.toBeNull());
    expect(state()).toBe('Connecting');
    const socket = FakeSocket.last!;
    expect(socket.url).toBe(
      'ws://sandcast.test/api/environment-custom-image-setup-sessions/sess_1/terminal/ws?terminalSessionId=term_1&cols=100&rows=30',
    );
    expect(socket.url).not.toContain('single-use-token');
    act(() => socket.serverOpens());
    expect(socket.sent[0]).toEqual({ type: 'auth', token: 'single-use-token' });
    act(() => socket.serverSends({ type: 'ready', terminalSessionId: 'term_1', reattached: false, replayBytes: 0 }));
    expect(state()).toBe('Connected');
    act(() => socket.serverSends({ type: 'output', data: 'root@setup:~# ' }));
    expect(written.join('')).toContain('root@setup:~# ');
    expect(screen.getByRole('button', { name: 'Disconnect' })).toBeTruthy();
  });

  it.each([
    ['setup_finished', 'Setup finished: the terminal closed when the image was captured.'],
    ['setup_cancelled', 'The setup session was cancelled.'],
    ['expired', 'The setup session expired.'],
    ['ssh_closed', 'The SSH connection to the setup sandbox closed.'],
    ['server_shutdown', 'The Sandcast server shut down. Reconnect when it is back.'],
  ])('closed{%s} reads "Closed" with the reason in words, and offers Reconnect unless setup finished', async (reason, words) => {
    const api = fakeClient({ [TOKEN_ROUTE]: token });
    renderWithApi(<BrowserTerminal target={{ kind: 'setup', id: 'sess_1' }} autoOpen onUnavailable={() => {}} />, api.client);
    await waitFor(() => expect(FakeSocket.last).not.toBeNull());
    const socket = FakeSocket.last!;
    act(() => {
      socket.serverOpens();
      socket.serverSends({ type: 'ready', terminalSessionId: 'term_1', reattached: false, replayBytes: 0 });
      socket.serverSends({ type: 'closed', reason });
      socket.close(1000);
    });
    expect(state()).toBe('Closed');
    expect(screen.getByTestId('terminal-detail').textContent).toBe(words);
    // A finished setup has no shell left to reconnect to.
    expect(screen.queryByRole('button', { name: 'Reconnect' }) === null).toBe(reason === 'setup_finished');
  });

  it('during a capture the header says the terminal closed for it and offers no reconnect', async () => {
    const api = fakeClient({ [TOKEN_ROUTE]: token });
    renderWithApi(<Harness />, api.client);
    await waitFor(() => expect(FakeSocket.last).not.toBeNull());
    const socket = FakeSocket.last!;
    act(() => {
      socket.serverOpens();
      socket.serverSends({ type: 'ready', terminalSessionId: 'term_1', reattached: false, replayBytes: 0 });
    });
    fireEvent.click(screen.getByRole('button', { name: 'capture' }));
    act(() => {
      socket.serverSends({ type: 'closed', reason: 'setup_finished' });
      socket.close(1000);
    });
    expect(state()).toBe('Closed for the capture');
    expect(screen.getByTestId('terminal-detail').textContent).toMatch(/closed because the image is being captured/);
    expect(screen.queryByText(/Setup finished/)).toBeNull();
    expect(screen.queryByRole('button', { name: 'Reconnect' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Disconnect' })).toBeNull();
  });

  it('an error frame is "Connection failed" with the server’s message', async () => {
    const api = fakeClient({ [TOKEN_ROUTE]: token });
    renderWithApi(<BrowserTerminal target={{ kind: 'setup', id: 'sess_1' }} autoOpen onUnavailable={() => {}} />, api.client);
    await waitFor(() => expect(FakeSocket.last).not.toBeNull());
    act(() => {
      FakeSocket.last!.serverOpens();
      FakeSocket.last!.serverSends({ type: 'error', message: 'the host key of the setup sandbox changed; refusing to connect' });
      FakeSocket.last!.close(1008);
    });
    expect(state()).toBe('Connection failed');
    expect(screen.getByTestId('terminal-detail').textContent).toContain('host key');
  });

  it('a refused token request is "Connection failed" with the API message', async () => {
    const api = fakeClient({
      [TOKEN_ROUTE]: {
        status: 409,
        body: { error: { code: 'conflict', message: 'the setup session is capturing; a terminal needs a running session' } },
      },
    });
    renderWithApi(<BrowserTerminal target={{ kind: 'setup', id: 'sess_1' }} autoOpen onUnavailable={() => {}} />, api.client);
    await waitFor(() => expect(state()).toBe('Connection failed'));
    expect(screen.getByTestId('terminal-detail').textContent).toContain('needs a running session');
  });

  it('Disconnect closes the socket and says so', async () => {
    const api = fakeClient({ [TOKEN_ROUTE]: token });
    renderWithApi(<BrowserTerminal target={{ kind: 'setup', id: 'sess_1' }} autoOpen onUnavailable={() => {}} />, api.client);
    await waitFor(() => expect(FakeSocket.last).not.toBeNull());
    act(() => {
      FakeSocket.last!.serverOpens();
      FakeSocket.last!.serverSends({ type: 'ready', terminalSessionId: 'term_1', reattached: false, replayBytes: 0 });
    });
    await userEvent.click(screen.getByRole('button', { name: 'Disconnect' }));
    expect(state()).toBe('Closed');
    expect(screen.getByTestId('terminal-detail').textContent).toMatch(/You disconnected/);
  });

  it('no terminal for this connection: tells the panel', async () => {
    const onUnavailable = vi.fn();
    const api = fakeClient({
      [TOKEN_ROUTE]: {
        status: 422,
        body: { error: { code: 'capability_unsupported', message: 'no browser terminal for this connection' } },
      },
    });
    renderWithApi(<BrowserTerminal target={{ kind: 'setup', id: 'sess_1' }} autoOpen onUnavailable={onUnavailable} />, api.client);
    await waitFor(() => expect(onUnavailable).toHaveBeenCalledOnce());
  });
});
