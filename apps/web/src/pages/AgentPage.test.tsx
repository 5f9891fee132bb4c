import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Navigate, Route, Routes } from 'react-router';
import { describe, expect, it } from 'vitest';
import { agent, environment, fakeClient, renderWithApi, revision } from '../test/fake-api.tsx';
import { AgentPage } from './AgentPage.tsx';

const coder = agent({ mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: 'rev_1' } } });
const older = { ...coder.currentVersion, id: 'agv_0', number: 1 };
const current = { ...coder.currentVersion, id: 'agv_1', number: 2, capabilities: ['sandbox_fleet' as const] };

function api() {
  return fakeClient({
    'GET /api/agents/agt_1': { body: { ...coder, currentVersion: current } },
    'GET /api/agents/agt_1/versions': { body: { versions: [older, current] } },
    'GET /api/environments': { body: { environments: [environment] } },
    'GET /api/environments/env_1/revisions': { body: { revisions: [revision()] } },
    'DELETE /api/agents/agt_1': { body: { ...coder, archivedAt: '2026-01-02T10:00:00.000Z' } },
  });
}

function renderPage(client: ReturnType<typeof api>) {
  return renderWithApi(
    <Routes>
      <Route path="/" element={<Navigate to="/agents/agt_1" />} />
      <Route path="/agents/:id" element={<AgentPage />} />
    </Routes>,
    client.client,
  );
}

describe('Agent page', () => {
  it('lists the versions newest first, naming each binding’s environment and revision', async () => {
    renderPage(api());
    const history = await screen.findByRole('region', { name: 'Version history' });
    await waitFor(() => expect(within(history).getAllByRole('listitem')).toHaveLength(2));
    const [first, second] = within(history).getAllByRole('listitem');
    expect(first!.textContent).toMatch(/^v2Fixed1 binding.*current/);
    expect(second!.textContent).toMatch(/^v1/);
    await waitFor(() => expect(first!.textContent).toContain('build #1'));
    expect(first!.textContent).toContain('sandbox_fleet');
  });

  it('Archive asks first; confirming archives the agent', async () => {
    const client = api();
    renderPage(client);
    await userEvent.click(await screen.findByRole('button', { name: 'Archive' }));
    const dialog = await screen.findByRole('alertdialog');
    expect(within(dialog).getByText(/starts no new sessions/)).toBeTruthy();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(client.calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.click(screen.getByRole('button', { name: 'Archive' }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Archive agent' }));
    await waitFor(() => expect(client.calls.some((c) => c.method === 'DELETE' && c.path === '/api/agents/agt_1')).toBe(true));
    expect(await screen.findByText('Agent coder archived')).toBeTruthy();
  });
});
