import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { environment, fakeClient, renderWithApi } from '../test/fake-api.tsx';
import { EnvironmentsPage } from './EnvironmentsPage.tsx';
import { SandboxesPage } from './SandboxesPage.tsx';

const routes = {
  'GET /api/sandbox-targets': {
    body: { targets: [{ provider: 'local', displayName: 'Local (namespaces)', available: true, capabilities: {}, configSchema: {} }] },
  },
  'GET /api/environments': { body: { environments: [{ ...environment, provider: 'local' }] } },
  'GET /api/sandboxes': { body: { sandboxes: [] } },
};

describe('one provider name on every page', () => {
  it('the Sandboxes environment picker uses the display name, not the provider id', async () => {
    renderWithApi(<SandboxesPage />, fakeClient(routes).client);
    expect(await screen.findByRole('option', { name: 'build (Local (namespaces))' })).toBeTruthy();
    expect(screen.queryByRole('option', { name: 'build (local)' })).toBeNull();
  });

  it('the Environments table uses the same display name', async () => {
    renderWithApi(<EnvironmentsPage />, fakeClient(routes).client);
    expect(await screen.findByText('Local (namespaces)')).toBeTruthy();
  });
});
