import type { CheckpointBody } from '@sandcast/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeClient, renderWithApi } from '../../test/fake-api.tsx';
import { CheckpointTimeline } from './CheckpointTimeline.tsx';

const checkpoint = (id: string, overrides: Partial<CheckpointBody> = {}): CheckpointBody => ({
  id,
  generation: 1,
  trigger: 'auto',
  storedBytes: 2048,
  totalBytes: 10 * 1024 * 1024,
  fileCount: 12,
  changedPaths: 3,
  createdAt: '2026-01-01T10:00:00.000Z',
  attachedAt: '2026-01-01T10:00:00.000Z',
  current: false,
  ...overrides,
});

const listed = (checkpoints: CheckpointBody[]) => ({
  body: { checkpoints, currentCheckpointId: checkpoints.find((c) => c.current)?.id ?? null, retention: 20 },
});

describe('CheckpointTimeline', () => {
  it('lists checkpoints newest first with trigger, changed paths and sizes, and restores one after confirmation', async () => {
    const newest = checkpoint(`ckp_${'b'.repeat(32)}`, { current: true, trigger: 'manual', changedPaths: 0, storedBytes: 0 });
    const older = checkpoint(`ckp_${'a'.repeat(32)}`);
    const api = fakeClient({
      'GET /api/sessions/ses_1/sandbox/checkpoints': listed([newest, older]),
      [`POST /api/sessions/ses_1/sandbox/checkpoints/${older.id}/restore`]: () =>
        new Response(
          `${JSON.stringify({ type: 'progress', phase: 'restoring 12 files' })}\n${JSON.stringify({ type: 'done', result: { checkpoint: { ...older, current: true } } })}\n`,
          { headers: { 'content-type': 'application/x-ndjson' } },
        ),
    });
    renderWithApi(<CheckpointTimeline sessionId="ses_1" canUse />, api.client);
    const rows = within(await screen.findByRole('table', { name: 'Checkpoints' }))
      .getAllByRole('row')
      .slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.textContent).toContain('checkpoint now');
    expect(rows[0]!.textContent).toContain('current');
    expect(rows[1]!.textContent).toContain('after an operation');
    expect(rows[1]!.textContent).toContain('2.0 KiB');
    expect(rows[1]!.textContent).toContain('10 MiB · 12 files');

    await userEvent.click(within(rows[1]!).getByRole('button', { name: `Restore ${older.id}` }));
    const dialog = await screen.findByRole('alertdialog');
    expect(dialog.textContent).toContain('files written since are gone');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Restore' }));
    await waitFor(() => expect(api.calls.some((c) => c.method === 'POST' && c.path.endsWith('/restore'))).toBe(true));
    expect(await screen.findByText('Workspace restored')).toBeTruthy();
  });

  it('backs out of a restore without a request', async () => {
    const older = checkpoint(`ckp_${'a'.repeat(32)}`);
    const api = fakeClient({
      'GET /api/sessions/ses_1/sandbox/checkpoints': listed([checkpoint(`ckp_${'b'.repeat(32)}`, { current: true }), older]),
    });
    renderWithApi(<CheckpointTimeline sessionId="ses_1" canUse />, api.client);
    await userEvent.click(await screen.findByRole('button', { name: `Restore ${older.id}` }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Cancel' }));
    expect(api.calls.filter((c) => c.method === 'POST')).toEqual([]);
  });

  it('says what to do when there are none yet, and takes one now', async () => {
    const api = fakeClient({
      'GET /api/sessions/ses_1/sandbox/checkpoints': listed([]),
      'POST /api/sessions/ses_1/sandbox/checkpoints': {
        status: 201,
        body: { checkpoint: checkpoint(`ckp_${'c'.repeat(32)}`, { current: true, trigger: 'manual' }) },
      },
    });
    renderWithApi(<CheckpointTimeline sessionId="ses_1" canUse />, api.client);
    expect(await screen.findByText(/No checkpoints yet/)).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Checkpoint now' }));
    expect(await screen.findByText('Checkpoint taken')).toBeTruthy();
    expect(api.calls.find((c) => c.method === 'POST')?.body).toEqual({});
  });

  it("shows the API's words when the list fails, and disables the actions when the sandbox cannot be used", async () => {
    const api = fakeClient({
      'GET /api/sessions/ses_1/sandbox/checkpoints': {
        status: 404,
        body: { error: { code: 'not_found', message: 'no session with id ses_1' } },
      },
    });
    renderWithApi(<CheckpointTimeline sessionId="ses_1" canUse={false} />, api.client);
    expect(await screen.findByText(/no session with id ses_1/)).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Checkpoint now' }) as HTMLButtonElement).disabled).toBe(true);
  });
});
