import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { environment, type FakeAnswer, fakeClient, overview, renderWithApi, template } from '../../test/fake-api.tsx';
import { CustomImagePanel } from './CustomImagePanel.tsx';

const OVERVIEW = 'GET /api/environments/env_1/custom-image-template';
const HISTORY = 'GET /api/environments/env_1/custom-image-templates';

function renderPanel(routes: Record<string, FakeAnswer | (() => FakeAnswer)>) {
  const api = fakeClient({ [HISTORY]: { body: { templates: [] } }, ...routes });
  renderWithApi(<CustomImagePanel environment={environment} providerName="Local (namespaces)" />, api.client);
  return api;
}

const active = { [OVERVIEW]: { body: overview({ activeTemplate: template(), activeTemplateMatchesConfig: true }) } };

describe('Custom image panel: layout and words', () => {
  it('Disable is secondary until confirmed; the red button is inside the confirmation', async () => {
    renderPanel(active);
    const disable = await screen.findByRole('button', { name: 'Disable' });
    expect(disable.className).not.toMatch(/bg-red/);
    await userEvent.click(disable);
    const confirm = within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Disable' });
    expect(confirm.className).toMatch(/bg-red/);
  });

  it('the Ref and the image id are compact monospace values with copy buttons', async () => {
    renderPanel(active);
    const view = await screen.findByTestId('active-template');
    const ref = within(view).getByText('sandcast-env_1-tpl_2');
    expect(ref.tagName).toBe('CODE');
    expect(ref.className).not.toMatch(/flex-1/);
    expect(within(view).getByRole('button', { name: 'Copy image ref' })).toBeTruthy();
    expect(within(view).getByRole('button', { name: 'Copy image id' })).toBeTruthy();
  });

  it('"Last used" reads the same in the active image and the history', async () => {
    renderPanel({ ...active, [HISTORY]: { body: { templates: [template()] } } });
    const view = await screen.findByTestId('active-template');
    const table = await screen.findByRole('table', { name: 'Image history' });
    expect(within(view).getByText('Not used by a run yet')).toBeTruthy();
    expect(within(table).getByText('Not used by a run yet')).toBeTruthy();
    expect(within(table).queryByText('—')).toBeNull();
  });

  it('history cells carry their column name, which a phone-sized screen stacks beside the value', async () => {
    renderPanel({ ...active, [HISTORY]: { body: { templates: [template()] } } });
    const table = await screen.findByRole('table', { name: 'Image history' });
    expect(table.className).toContain('data-table');
    const labels = [...table.querySelectorAll('tbody td')].map((td) => td.getAttribute('data-label'));
    expect(labels).toEqual(['Status', 'Kind', 'Ref', 'Captured', 'Last used']);
  });

  it('image history shows relative times with the exact second on hover', async () => {
    const a = new Date(Date.now() - 20_000).toISOString();
    const b = new Date(Date.now() - 50_000).toISOString();
    renderPanel({
      ...active,
      [HISTORY]: {
        body: { templates: [template({ capturedAt: a }), template({ id: 'tpl_1', status: 'superseded', capturedAt: b })] },
      },
    });
    const table = await screen.findByRole('table', { name: 'Image history' });
    const times = within(table)
      .getAllByText(/ago$/)
      .filter((el) => el.tagName === 'TIME');
    expect(times.map((t) => t.textContent)).toEqual(['20 s ago', '1 min ago']);
    expect(times[0]?.getAttribute('title')).toMatch(/\d{1,2}:\d{2}:\d{2}/);
    expect(times[0]?.getAttribute('title')).not.toBe(times[1]?.getAttribute('title'));
  });

  it('toasts about the image merge: a newer outcome replaces the older one', async () => {
    renderPanel({
      ...active,
      [HISTORY]: {
        body: { templates: [template(), template({ id: 'tpl_1', status: 'superseded', supersededByTemplateId: 'tpl_2' })] },
      },
      'POST /api/environments/env_1/custom-image-template/rollback': {
        status: 409,
        body: { error: { code: 'conflict', message: 'a setup session is running; finish or cancel it first' } },
      },
    });
    const rollback = await screen.findByRole('button', { name: 'Rollback' });
    await waitFor(() => expect((rollback as HTMLButtonElement).disabled).toBe(false));
    await userEvent.click(rollback);
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Cancel' }));
    expect(await screen.findByText('The active template was not changed.')).toBeTruthy();
    await userEvent.click(rollback);
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Rollback' }));
    expect(await screen.findByText('Rollback failed')).toBeTruthy();
    await waitFor(() => expect(screen.queryByText('The active template was not changed.')).toBeNull());
  });
});
