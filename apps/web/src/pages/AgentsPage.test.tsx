import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { agent, fakeClient, renderWithApi } from '../test/fake-api.tsx';
import { AgentsPage } from './AgentsPage.tsx';

describe('Agents page', () => {
  it('lists name, mode, bindings, version and archived', async () => {
    const picker = agent(
      {
        mode: 'selectable',
        default: 'small',
        bindings: { small: { environmentRevisionId: 'rev_1' }, big: { environmentRevisionId: 'rev_1' } },
      },
      { id: 'agt_2', name: 'picker', archivedAt: '2026-01-02T10:00:00.000Z' },
    );
    const coder = agent({ mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: 'rev_1' } } });
    const api = fakeClient({ 'GET /api/agents': { body: { agents: [coder, picker] } } });
    renderWithApi(<AgentsPage />, api.client);
    const table = await screen.findByRole('table', { name: 'Agents' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => Array.from(r.querySelectorAll('td')).map((td) => td.textContent))).toEqual([
      ['coder', 'Fixed', 'main', 'v1', '—'],
      ['picker', 'Selectable', 'small (default), big', 'v1', expect.stringContaining('archived')],
    ]);
    expect(within(rows[0]!).getByRole('link', { name: 'coder' }).getAttribute('href')).toBe('/agents/agt_1');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Show archived' }));
    await waitFor(() => expect(api.calls.at(-1)?.path).toBe('/api/agents?includeArchived=true'));
  });

  it('with no agents, says so and offers Create agent', async () => {
    renderWithApi(<AgentsPage />, fakeClient({ 'GET /api/agents': { body: { agents: [] } } }).client);
    expect(await screen.findByText(/No agents yet/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Create agent' }).getAttribute('href')).toBe('/agents/new');
  });

  it('a failed load shows the message and a retry', async () => {
    const api = fakeClient({ 'GET /api/agents': { status: 500, body: { error: { code: 'internal', message: 'database is down' } } } });
    renderWithApi(<AgentsPage />, api.client);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('database is down');
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(api.calls.filter((c) => c.path === '/api/agents').length).toBe(2));
  });
});
