import type { FleetOverviewRow } from '@sandcast/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeClient, renderWithApi } from '../test/fake-api.tsx';
import { FleetPage } from './FleetPage.tsx';

const row = (overrides: Partial<FleetOverviewRow>): FleetOverviewRow => ({
  id: 'sbx_1',
  role: 'primary',
  logicalId: null,
  session: { id: 'ses_1', status: 'active' },
  environment: { id: 'env_1', name: 'web' },
  environmentRevisionNumber: 3,
  imageId: null,
  provider: 'local',
  desiredState: 'ready',
  observedState: 'running',
  failureReason: null,
  generation: 1,
  lastCheckpointId: null,
  lastActivityAt: '2026-01-01T10:00:00.000Z',
  attention: [],
  ...overrides,
});

const cellsOf = (table: HTMLElement) =>
  within(table)
    .getAllByRole('row')
    .slice(1)
    .map((r) => Array.from(r.querySelectorAll('td')).map((td) => td.textContent?.replace(/\s+/g, ' ').trim()));

describe('Fleet page', () => {
  it('lists every sandbox with session, revision, image, state, generation, checkpoint and the server’s flags', async () => {
    const api = fakeClient({
      'GET /api/fleet': {
        body: {
          sandboxes: [
            row({}),
            row({
              id: 'sbx_2',
              role: 'resource',
              logicalId: 'rsb_0123456789abcdef',
              imageId: 'img_7',
              generation: 2,
              lastCheckpointId: 'ckp_9',
              attention: ['idle_running'],
            }),
            row({ id: 'sbx_3', role: 'plain', session: null, environment: null, observedState: 'lost', attention: ['lost'] }),
            row({
              id: 'sbx_4',
              session: { id: 'ses_2', status: 'ended' },
              desiredState: 'deleted',
              observedState: 'failed',
              attention: ['failed', 'cleanup_failed'],
            }),
          ],
        },
      },
    });
    renderWithApi(<FleetPage />, api.client);
    const table = await screen.findByRole('table', { name: 'Fleet' });
    const cells = cellsOf(table);
    expect(cells.map((c) => c.slice(0, 6))).toEqual([
      ['sbx_1', 'primary', 'ses_1', 'web', 'rev 3', 'base'],
      ['rsb_0123456789abcdef', 'resource', 'ses_1', 'web', 'rev 3', 'img_7'],
      ['sbx_3', 'sandbox', '—', 'deleted', 'rev 3', 'base'],
      ['sbx_4', 'primary', 'ses_2(ended)', 'web', 'rev 3', 'base'],
    ]);
    expect(cells.map((c) => c.slice(7))).toEqual([
      ['1', 'none', '—'],
      ['2', 'ckp_9', 'idle running'],
      ['1', 'none', 'lost'],
      ['1', 'none', 'failedcleanup failed'],
    ]);
    expect(cells[3]?.[6]).toContain('deleted');
    expect(screen.getByText(/3 need attention/)).toBeTruthy();
    expect(within(table).getByRole('link', { name: 'ses_2' }).getAttribute('href')).toBe('/sessions/ses_2');

    await userEvent.click(screen.getByRole('checkbox', { name: 'Needs attention only' }));
    expect(cellsOf(screen.getByRole('table', { name: 'Fleet' })).map((c) => c[0])).toEqual(['rsb_0123456789abcdef', 'sbx_3', 'sbx_4']);

    await userEvent.click(screen.getByRole('checkbox', { name: 'Show deleted' }));
    await waitFor(() => expect(api.calls.at(-1)?.path).toBe('/api/fleet?includeDeleted=true'));
  });

  it('with no sandboxes, says so and points at sessions', async () => {
    renderWithApi(<FleetPage />, fakeClient({ 'GET /api/fleet': { body: { sandboxes: [] } } }).client);
    expect(await screen.findByText(/No sandboxes yet/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'start a session' }).getAttribute('href')).toBe('/sessions');
  });

  it('a failed load shows the API’s message and a retry', async () => {
    const api = fakeClient({ 'GET /api/fleet': { status: 403, body: { error: { code: 'forbidden', message: 'admin keys only' } } } });
    renderWithApi(<FleetPage />, api.client);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('admin keys only');
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(api.calls.filter((c) => c.path === '/api/fleet').length).toBe(2));
  });
});
