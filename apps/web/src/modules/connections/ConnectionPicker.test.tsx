import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { EnvironmentCreatePage } from '../../pages/EnvironmentCreatePage.tsx';
import { fakeClient, renderWithApi } from '../../test/fake-api.tsx';

const T0 = '2026-01-01T10:00:00.000Z';
const daytona = {
  provider: 'daytona',
  displayName: 'Daytona',
  available: true,
  capabilities: {},
  configSchema: { type: 'object', properties: { snapshot: { type: 'string' } } },
  connection: { configSchema: { type: 'object', properties: {} }, secretsSchema: { type: 'object', properties: {} } },
};
const connection = (id: string, name: string, provider = 'daytona') => ({
  id,
  name,
  provider,
  config: {},
  secrets: { apiKey: { secret: true, set: true } },
  createdAt: T0,
  updatedAt: T0,
});

function renderForm(connections: unknown[]) {
  const api = fakeClient({
    'GET /api/sandbox-targets': { body: { targets: [daytona] } },
    'GET /api/connections': { body: { connections } },
    'POST /api/environments': ({ body }) => ({ status: 201, body: { ...(body as object), id: 'env_9' } }),
  });
  renderWithApi(<EnvironmentCreatePage />, api.client);
  return api;
}

describe('the connection picker of the environment form', () => {
  it("offers the provider's connections, requires one, and sends its id", async () => {
    const api = renderForm([connection('conn_a', 'daytona-main'), connection('conn_b', 'other', 'e2b')]);
    await userEvent.click(await screen.findByRole('radio', { name: /Daytona/ }));
    const picker = (await screen.findByLabelText('Connection')) as HTMLSelectElement;
    expect([...picker.options].map((o) => o.textContent)).toEqual(['Choose a connection…', 'daytona-main']);
    await userEvent.type(screen.getByLabelText('Name', { exact: true }), 'dt');
    await userEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    expect(screen.getByTestId('connection-error').textContent).toMatch(/^Required/);
    expect(api.calls.some((c) => c.method === 'POST')).toBe(false);
    await userEvent.selectOptions(picker, 'conn_a');
    await userEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() =>
      expect(api.calls.find((c) => c.method === 'POST')?.body).toMatchObject({ provider: 'daytona', connectionId: 'conn_a' }),
    );
  });

  it('without a connection it says where to make one', async () => {
    renderForm([]);
    await userEvent.click(await screen.findByRole('radio', { name: /Daytona/ }));
    expect((await screen.findByTestId('no-connection')).textContent).toContain('Settings → Connections');
    expect(screen.getByRole('link', { name: /Create one under Settings → Connections/ }).getAttribute('href')).toBe(
      '/settings/connections',
    );
  });
});
