import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeClient, renderWithApi } from '../test/fake-api.tsx';
import { ConnectionsPage } from './ConnectionsPage.tsx';

const T0 = '2026-01-01T10:00:00.000Z';
const daytona = {
  provider: 'daytona',
  displayName: 'Daytona',
  available: false,
  unavailableReason: 'no connection: add a Daytona connection under Settings → Connections',
  capabilities: {},
  configSchema: { type: 'object', properties: {} },
  connection: {
    configSchema: {
      type: 'object',
      properties: { apiUrl: { type: 'string', description: 'The Daytona API URL', default: 'https://app.daytona.io/api' } },
    },
    secretsSchema: {
      type: 'object',
      properties: { apiKey: { type: 'string', secret: true, description: 'A Daytona API key' } },
      required: ['apiKey'],
    },
  },
};
const local = {
  provider: 'local',
  displayName: 'Local',
  available: true,
  capabilities: {},
  configSchema: { type: 'object', properties: {} },
};
const stored = {
  id: 'conn_1',
  name: 'daytona-main',
  provider: 'daytona',
  config: { apiUrl: 'https://app.daytona.io/api' },
  secrets: { apiKey: { secret: true, set: true } },
  createdAt: T0,
  updatedAt: T0,
};

describe('Settings → Connections', () => {
  it('lists connections without their secrets, and tests one: the reason says what to fix', async () => {
    const api = fakeClient({
      'GET /api/connections': { body: { connections: [stored] } },
      'GET /api/sandbox-targets': { body: { targets: [daytona, local] } },
      'POST /api/connections/conn_1/test': { body: { ok: false, reason: 'Daytona refused the API key (401); create a new key' } },
    });
    renderWithApi(<ConnectionsPage />, api.client);
    const table = await screen.findByRole('table', { name: 'Connections' });
    expect(within(table).getByText('daytona-main')).toBeTruthy();
    expect(within(table).getByText('apiKey (hidden)')).toBeTruthy();
    await userEvent.click(within(table).getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(screen.getByTestId('test-result-daytona-main').textContent).toContain('refused the API key (401)'));
  });

  it('creates one from the provider connection schema: the secret is a password field and is sent once', async () => {
    const api = fakeClient({
      'GET /api/connections': { body: { connections: [] } },
      'GET /api/sandbox-targets': { body: { targets: [daytona, local] } },
      'POST /api/connections': { status: 201, body: stored },
    });
    renderWithApi(<ConnectionsPage />, api.client);
    expect(await screen.findByText(/No connections yet/)).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'New connection' }));
    const form = await screen.findByRole('form', { name: 'Create connection' });
    // Only providers that use connections are offered.
    expect(
      within(form)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual(['Daytona']);
    await userEvent.click(within(form).getByRole('button', { name: 'Create connection' }));
    expect(api.calls.some((c) => c.method === 'POST')).toBe(false);
    await userEvent.type(within(form).getByLabelText('Name', { exact: true }), 'daytona-main');
    const key = form.querySelector('input[type="password"]') as HTMLInputElement;
    expect(key).not.toBeNull();
    await userEvent.type(key, 'dtn_secret');
    await userEvent.click(within(form).getByRole('button', { name: 'Create connection' }));
    await waitFor(() => expect(api.calls.find((c) => c.method === 'POST')).toBeTruthy());
    expect(api.calls.find((c) => c.method === 'POST')?.body).toMatchObject({
      name: 'daytona-main',
      provider: 'daytona',
      secrets: { apiKey: 'dtn_secret' },
    });
  });

  it('a refused delete says which environments use the connection', async () => {
    const api = fakeClient({
      'GET /api/connections': { body: { connections: [stored] } },
      'GET /api/sandbox-targets': { body: { targets: [daytona] } },
      'DELETE /api/connections/conn_1': {
        status: 409,
        body: {
          error: {
            code: 'conflict',
            message: 'connection daytona-main is used by the environment build; point it at another connection or delete it first',
            details: { environments: ['build'] },
          },
        },
      },
    });
    renderWithApi(<ConnectionsPage />, api.client);
    await userEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Delete connection' }));
    expect(await screen.findByText(/used by the environment build/)).toBeTruthy();
  });
});
