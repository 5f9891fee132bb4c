import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { fakeClient, renderWithApi } from '../test/fake-api.tsx';
import { OpenPorts } from './OpenPorts.tsx';

const HEX = '0123456789abcdef0123456789abcdef';

/** The same list for both owners of ports: a sandbox, and a setup session's sandbox. */
const OWNERS = [
  {
    name: 'a sandbox',
    id: `sbx_${HEX}`,
    prefix: `/api/sandboxes/sbx_${HEX}/ports`,
    idField: 'sandboxId',
    api: (client: ReturnType<typeof fakeClient>['client']) => client.sandboxes.ports,
  },
  {
    name: 'a setup session',
    id: `setup_${HEX}`,
    prefix: `/api/environment-custom-image-setup-sessions/setup_${HEX}/ports`,
    idField: 'sessionId',
    api: (client: ReturnType<typeof fakeClient>['client']) => client.customImages.ports,
  },
] as const;

describe.each(OWNERS)('the open ports of $name', (owner) => {
  const base = `http://3000-${owner.id.replace('_', '-')}.sandboxes.localhost:7420/`;
  const port = { [owner.idField]: owner.id, port: 3000, visibility: 'private', baseUrl: base, createdAt: '2026-11-30T18:00:00.000Z' };

  it('lists open ports with their URL, opens one, copies a link with its token, and closes one', async () => {
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    let open: (typeof port)[] = [];
    const { client, calls } = fakeClient({
      [`GET ${owner.prefix}`]: () => ({ body: { ports: open } }),
      [`POST ${owner.prefix}`]: () => {
        open = [port];
        return { status: 201, body: port };
      },
      [`GET ${owner.prefix}/3000/url`]: {
        body: { url: `${base}?sandcast_token=abc.def`, expiresAt: '2026-11-30T19:00:00.000Z' },
      },
      [`DELETE ${owner.prefix}/3000`]: () => {
        open = [];
        return { body: port };
      },
    });
    renderWithApi(<OpenPorts api={owner.api(client)} ownerId={owner.id} queryKey={['ports', owner.id]} />, client);
    expect(await screen.findByText(/No open ports/)).toBeTruthy();

    fireEvent.change(screen.getByLabelText(`Port to open in ${owner.id}`), { target: { value: '3000' } });
    fireEvent.click(screen.getByRole('button', { name: 'Open port' }));
    expect(await screen.findByText(base)).toBeTruthy();
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ port: 3000 });

    fireEvent.click(screen.getByRole('button', { name: 'Copy the URL of port 3000' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(base));
    fireEvent.click(screen.getByRole('button', { name: /Copy link with token/ }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(`${base}?sandcast_token=abc.def`));

    fireEvent.click(screen.getByRole('button', { name: 'Close port 3000' }));
    expect(await screen.findByText(/No open ports/)).toBeTruthy();
    expect(calls.some((c) => c.method === 'DELETE' && c.path === `${owner.prefix}/3000`)).toBe(true);
  });

  it('refuses a port outside 1-65535 without asking the server', async () => {
    const { client, calls } = fakeClient({ [`GET ${owner.prefix}`]: { body: { ports: [] } } });
    renderWithApi(<OpenPorts api={owner.api(client)} ownerId={owner.id} queryKey={['ports', owner.id]} />, client);
    await screen.findByText(/No open ports/);
    fireEvent.change(screen.getByLabelText(`Port to open in ${owner.id}`), { target: { value: '65536' } });
    fireEvent.click(screen.getByRole('button', { name: 'Open port' }));
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
  });
});
