import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { fakeClient, renderWithApi } from '../../test/fake-api.tsx';
import { SandboxPorts } from './SandboxPorts.tsx';

const SANDBOX = 'sbx_0123456789abcdef0123456789abcdef';
const BASE = 'http://3000-sbx-0123456789abcdef0123456789abcdef.sandboxes.localhost:7420/';
const port = { sandboxId: SANDBOX, port: 3000, visibility: 'private', baseUrl: BASE, createdAt: '2026-11-30T18:00:00.000Z' };

describe('Sandboxes → a sandbox’s ports', () => {
  it('lists open ports with their URL, opens one, copies a link with its token, and closes one', async () => {
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    let open: (typeof port)[] = [];
    const { client, calls } = fakeClient({
      [`GET /api/sandboxes/${SANDBOX}/ports`]: () => ({ body: { ports: open } }),
      [`POST /api/sandboxes/${SANDBOX}/ports`]: () => {
        open = [port];
        return { status: 201, body: port };
      },
      [`GET /api/sandboxes/${SANDBOX}/ports/3000/url`]: {
        body: { url: `${BASE}?sandcast_token=abc.def`, expiresAt: '2026-11-30T19:00:00.000Z' },
      },
      [`DELETE /api/sandboxes/${SANDBOX}/ports/3000`]: () => {
        open = [];
        return { body: port };
      },
    });
    renderWithApi(<SandboxPorts sandboxId={SANDBOX} />, client);
    expect(await screen.findByText(/No open ports/)).toBeTruthy();

    fireEvent.change(screen.getByLabelText(`Port to open in ${SANDBOX}`), { target: { value: '3000' } });
    fireEvent.click(screen.getByRole('button', { name: 'Open port' }));
    expect(await screen.findByText(BASE)).toBeTruthy();
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ port: 3000 });

    fireEvent.click(screen.getByRole('button', { name: 'Copy the URL of port 3000' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(BASE));
    fireEvent.click(screen.getByRole('button', { name: /Copy link with token/ }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(`${BASE}?sandcast_token=abc.def`));

    fireEvent.click(screen.getByRole('button', { name: 'Close port 3000' }));
    expect(await screen.findByText(/No open ports/)).toBeTruthy();
    expect(calls.some((c) => c.method === 'DELETE' && c.path === `/api/sandboxes/${SANDBOX}/ports/3000`)).toBe(true);
  });

  it('refuses a port outside 1-65535 without asking the server', async () => {
    const { client, calls } = fakeClient({ [`GET /api/sandboxes/${SANDBOX}/ports`]: { body: { ports: [] } } });
    renderWithApi(<SandboxPorts sandboxId={SANDBOX} />, client);
    await screen.findByText(/No open ports/);
    fireEvent.change(screen.getByLabelText(`Port to open in ${SANDBOX}`), { target: { value: '65536' } });
    fireEvent.click(screen.getByRole('button', { name: 'Open port' }));
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
  });
});
