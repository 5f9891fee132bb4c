import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { environment, type FakeAnswer, fakeClient, overview, renderWithApi, session, template } from '../../test/fake-api.tsx';
import { CustomImagePanel } from './CustomImagePanel.tsx';

// The terminal has its own tests; here it only has to show up (or say it cannot).
vi.mock('../terminal/BrowserTerminal.tsx', () => ({
  BrowserTerminal: ({ target }: { target: { kind: string; id: string } }) => (
    <div data-testid="browser-terminal">
      {target.kind} terminal for {target.id}
    </div>
  ),
}));

const OVERVIEW = 'GET /api/environments/env_1/custom-image-template';
const HISTORY = 'GET /api/environments/env_1/custom-image-templates';
const SESSION = 'GET /api/environment-custom-image-setup-sessions/sess_1';
const CHANGES = 'GET /api/environment-custom-image-setup-sessions/sess_1/changes';

const noChanges = { body: { changes: [], warnings: [], totalBytes: 0, truncated: false } };

function renderPanel(routes: Record<string, FakeAnswer | ((r: { body: unknown }) => FakeAnswer)>) {
  const api = fakeClient({ [HISTORY]: { body: { templates: [] } }, ...routes });
  renderWithApi(<CustomImagePanel environment={environment} providerName="Daytona" />, api.client);
  return api;
}

describe('Custom image panel', () => {
  it('shows a skeleton while loading', () => {
    renderPanel({ [OVERVIEW]: () => new Promise<FakeAnswer>(() => {}) as unknown as FakeAnswer });
    expect(screen.getByRole('status', { name: 'Loading the custom image' })).toBeTruthy();
  });

  it('shows the API error in words with a retry', async () => {
    let calls = 0;
    renderPanel({
      [OVERVIEW]: () => {
        calls += 1;
        return calls === 1
          ? {
              status: 403,
              body: { error: { code: 'feature_disabled', message: 'Environments are an experimental feature and are turned off.' } },
            }
          : { body: overview() };
      },
    });
    expect(await screen.findByText('Environments are an experimental feature and are turned off.')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('Not configured')).toBeTruthy();
  });

  it('Unsupported provider: says so and offers nothing', async () => {
    renderPanel({
      [OVERVIEW]: {
        body: overview({
          capability: {
            ...overview().capability,
            state: 'unsupported_provider',
            label: 'Unsupported provider',
            message: 'This provider does not advertise interactive template setup.',
          },
        }),
      },
    });
    expect(await screen.findByText('Unsupported provider')).toBeTruthy();
    expect(screen.getByText('This provider does not advertise interactive template setup.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Configure image' })).toBeNull();
  });

  it('Setup capture unavailable: says so', async () => {
    renderPanel({
      [OVERVIEW]: {
        body: overview({
          capability: {
            ...overview().capability,
            state: 'capture_unavailable',
            label: 'Setup capture unavailable',
            message: 'This provider advertises setup, but image capture is unavailable.',
          },
        }),
      },
    });
    expect(await screen.findByText('Setup capture unavailable')).toBeTruthy();
    expect(screen.getByText('This provider advertises setup, but image capture is unavailable.')).toBeTruthy();
  });

  it('Not configured: the hint names the provider, and Configure image starts a setup session', async () => {
    let started = false;
    const api = renderPanel({
      [OVERVIEW]: () => ({ body: started ? overview({ activeSession: session({ status: 'starting' }) }) : overview() }),
      'POST /api/environments/env_1/custom-image-setup-sessions': () => {
        started = true;
        return { status: 201, body: { session: session({ status: 'starting' }), connectionPayload: null } };
      },
    });
    expect(await screen.findByText('Template setup')).toBeTruthy();
    expect(screen.getByText('Not configured')).toBeTruthy();
    expect(screen.getByText('Capture a custom Daytona image with your tools already logged in.')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Configure image' }));
    expect(await screen.findByText('Setup starting')).toBeTruthy();
    expect(screen.getByText(/Starting the setup sandbox…/)).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Finished' }) as HTMLButtonElement).disabled).toBe(true);
    expect(api.calls.find((c) => c.method === 'POST')?.headers['x-sandcast-csrf']).toBe('1');
  });

  it('Setup running: status with expiry, terminal, SSH fallback with copy, capture review with warnings, Finished enabled', async () => {
    renderPanel({
      [OVERVIEW]: { body: overview({ activeSession: session() }) },
      [SESSION]: {
        body: {
          session: session(),
          connectionPayload: {
            type: 'ssh',
            command: 'ssh -p 2222 tok_abc@127.0.0.1',
            host: '127.0.0.1',
            port: 2222,
            username: 'tok_abc',
            expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
          },
        },
      },
      [CHANGES]: {
        body: {
          changes: [
            { path: '/root/.config/gh/hosts.yml', kind: 'added', sizeBytes: 120, type: 'file' },
            { path: '/usr/local/bin/tool', kind: 'added', sizeBytes: 2048, type: 'file' },
          ],
          warnings: [
            { path: '/root/.config/gh/hosts.yml', reason: 'GitHub CLI token' },
            { path: '/root/.bashrc', line: 12, reason: 'AWS secret access key' },
          ],
          totalBytes: 2168,
          truncated: false,
        },
      },
    });
    const status = await screen.findByTestId('setup-status');
    expect(within(status).getByText('Setup running')).toBeTruthy();
    expect(within(status).getByText(/Expires in (59|60) min/)).toBeTruthy();
    expect(screen.getByTestId('browser-terminal').textContent).toContain('sess_1');
    const fallback = await screen.findByTestId('ssh-fallback');
    expect(within(fallback).getByText('SSH command fallback')).toBeTruthy();
    expect(within(fallback).getByText('ssh -p 2222 tok_abc@127.0.0.1')).toBeTruthy();
    expect(within(fallback).getByRole('button', { name: 'Copy SSH command' })).toBeTruthy();
    const review = screen.getByTestId('capture-review');
    expect(await within(review).findByText('/usr/local/bin/tool')).toBeTruthy();
    expect(within(screen.getByTestId('capture-warnings')).getByText(/GitHub CLI token/)).toBeTruthy();
    // A finding in a file's content points at its line.
    expect(within(screen.getByTestId('capture-warnings')).getByText('/root/.bashrc:12')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Finished' }) as HTMLButtonElement).disabled).toBe(false);
    expect((screen.getByRole('button', { name: 'Cancel' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('without a browser terminal for the connection, says what to do instead', async () => {
    renderPanel({
      [OVERVIEW]: { body: overview({ activeSession: session(), capability: { ...overview().capability, connectionTypes: [] } }) },
      [SESSION]: { body: { session: session(), connectionPayload: null } },
      [CHANGES]: noChanges,
    });
    expect(
      await screen.findByText(
        'Browser terminal is not available for this provider connection. Use the provider setup instructions, then finish or cancel here.',
      ),
    ).toBeTruthy();
    expect(screen.queryByTestId('browser-terminal')).toBeNull();
  });

  it('Capturing template: progress with elapsed time, Finished and Cancel disabled', async () => {
    renderPanel({ [OVERVIEW]: { body: overview({ activeSession: session({ status: 'capturing' }) }) } });
    expect(await screen.findByText('Capturing template')).toBeTruthy();
    expect(screen.getByTestId('capture-progress').textContent).toMatch(/Capturing template… \d+ s/);
    expect((screen.getByRole('button', { name: 'Finished' }) as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByRole('button', { name: 'Cancel' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('Finished reviews the capture, then toasts "Template captured"', async () => {
    let finished = false;
    renderPanel({
      [OVERVIEW]: () => ({
        body: finished
          ? overview({
              activeTemplate: template(),
              activeTemplateMatchesConfig: true,
              latestSession: session({ status: 'promoted', finishedAt: new Date().toISOString() }),
            })
          : overview({ activeSession: session() }),
      }),
      [SESSION]: { body: { session: session(), connectionPayload: null } },
      [CHANGES]: {
        body: {
          changes: [{ path: '/opt/tool', kind: 'added', sizeBytes: 5, type: 'file' }],
          warnings: [],
          totalBytes: 5,
          truncated: false,
        },
      },
      'POST /api/environment-custom-image-setup-sessions/sess_1/finish': () => {
        finished = true;
        return { body: { session: session({ status: 'promoted' }), template: template() } };
      },
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Finished' }));
    const dialog = await screen.findByRole('alertdialog');
    expect(await within(dialog).findByText(/1 changed path/)).toBeTruthy();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Capture image' }));
    expect(await screen.findByText('Future runs can use the promoted template.')).toBeTruthy();
    expect(await screen.findByTestId('active-template')).toBeTruthy();
    expect(within(screen.getByTestId('setup-status')).getByText('Template captured')).toBeTruthy();
  });

  it('Cancel toasts that the active template was not changed', async () => {
    renderPanel({
      [OVERVIEW]: { body: overview({ activeSession: session() }) },
      [SESSION]: { body: { session: session(), connectionPayload: null } },
      [CHANGES]: noChanges,
      'POST /api/environment-custom-image-setup-sessions/sess_1/cancel': { body: { session: session({ status: 'cancelled' }) } },
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Cancel' }));
    expect(await screen.findByText('The active template was not changed.')).toBeTruthy();
  });

  it.each([
    ['cancelled', 'Setup cancelled', null],
    ['timed_out', 'Setup expired', null],
    ['failed', 'Setup failed', 'capture failed: disk full'],
  ] as const)('the last session ended as %s: "%s" stays in view', async (status, label, reason) => {
    renderPanel({
      [OVERVIEW]: { body: overview({ latestSession: session({ status, failureReason: reason, finishedAt: new Date().toISOString() }) }) },
    });
    expect(await screen.findByText(label)).toBeTruthy();
    if (reason) expect(screen.getByText(reason)).toBeTruthy();
    expect(screen.getByText('Not configured')).toBeTruthy();
  });

  it('Active template: provider, kind, ref, times; Rollback off without a previous image', async () => {
    renderPanel({
      [OVERVIEW]: { body: overview({ activeTemplate: template(), activeTemplateMatchesConfig: true }) },
    });
    const view = await screen.findByTestId('active-template');
    expect(within(view).getByText('Daytona')).toBeTruthy();
    expect(within(view).getByText('Snapshot')).toBeTruthy();
    expect(within(view).getByText('sandcast-env_1-tpl_2')).toBeTruthy();
    expect(within(view).getByText('Not used by a run yet')).toBeTruthy();
    expect((within(view).getByRole('button', { name: 'Rollback' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.queryByTestId('out-of-sync')).toBeNull();
  });

  it('Rollback confirms, then toasts; backing out of a confirmation changes nothing', async () => {
    const history = [
      template(),
      template({ id: 'tpl_1', status: 'superseded', supersededByTemplateId: 'tpl_2', providerRef: 'sandcast-env_1-tpl_1' }),
    ];
    const api = renderPanel({
      [OVERVIEW]: { body: overview({ activeTemplate: template(), activeTemplateMatchesConfig: true }) },
      [HISTORY]: { body: { templates: history } },
      'POST /api/environments/env_1/custom-image-template/rollback': {
        body: { activeTemplate: history[1], supersededTemplate: { ...history[0], status: 'superseded' } },
      },
    });
    const table = await screen.findByRole('table', { name: 'Image history' });
    expect(within(table).getByText('superseded')).toBeTruthy();
    const rollback = screen.getByRole('button', { name: 'Rollback' });
    await waitFor(() => expect((rollback as HTMLButtonElement).disabled).toBe(false));

    await userEvent.click(rollback);
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Cancel' }));
    expect(await screen.findAllByText('The active template was not changed.')).not.toHaveLength(0);
    expect(api.calls.some((c) => c.path.endsWith('/rollback'))).toBe(false);

    await userEvent.click(rollback);
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Rollback' }));
    expect(await screen.findByText('Future runs will use the previous template.')).toBeTruthy();
  });

  it('Disable confirms, can delete the provider artefact, then toasts', async () => {
    const api = renderPanel({
      [OVERVIEW]: { body: overview({ activeTemplate: template(), activeTemplateMatchesConfig: true }) },
      'DELETE /api/environments/env_1/custom-image-template': {
        body: { template: template({ status: 'revoked' }), providerTemplateDeleted: true },
      },
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Disable' }));
    const dialog = await screen.findByRole('alertdialog');
    await userEvent.click(within(dialog).getByLabelText(/Also delete the provider's snapshot/));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Disable' }));
    expect(await screen.findByText('Future runs will use the base provider configuration.')).toBeTruthy();
    expect(api.calls.find((c) => c.method === 'DELETE')?.path).toContain('deleteProviderTemplate=true');
  });

  it('Refresh confirms and starts a session seeded from the active image', async () => {
    const api = renderPanel({
      [OVERVIEW]: { body: overview({ activeTemplate: template(), activeTemplateMatchesConfig: true }) },
      'POST /api/environments/env_1/custom-image-setup-sessions': {
        status: 201,
        body: { session: session({ status: 'starting' }), connectionPayload: null },
      },
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Refresh' }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Start setup' }));
    await waitFor(() => expect(api.calls.find((c) => c.method === 'POST')?.body).toEqual({ templateId: 'tpl_2' }));
  });

  it('out of sync: the banner offers Relink, and boot-source drift asks for confirmation first', async () => {
    const relinkBodies: unknown[] = [];
    renderPanel({
      [OVERVIEW]: {
        body: overview({ activeTemplate: template(), activeTemplateMatchesConfig: false, activeTemplateDrift: { paths: ['image'] } }),
      },
      'POST /api/environments/env_1/custom-image-template/relink': ({ body }) => {
        relinkBodies.push(body);
        return (body as { confirmBootSourceDrift?: boolean }).confirmBootSourceDrift
          ? { body: { template: template(), classification: 'boot_source_drift' } }
          : {
              status: 422,
              body: {
                error: {
                  code: 'unprocessable',
                  message: 'the boot source changed since this image was linked (image)',
                  details: { classification: 'boot_source_drift', driftedPaths: ['image'] },
                },
              },
            };
      },
    });
    const banner = await screen.findByTestId('out-of-sync');
    expect(within(banner).getByText("This image no longer matches the environment's configuration")).toBeTruthy();
    await userEvent.click(within(banner).getByRole('button', { name: 'Relink' }));
    const dialog = await screen.findByRole('alertdialog');
    expect(within(dialog).getByText('The boot source changed — relink anyway?')).toBeTruthy();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Relink anyway' }));
    expect(await screen.findByText('Template relinked')).toBeTruthy();
    expect(relinkBodies).toEqual([{ confirmBootSourceDrift: false }, { confirmBootSourceDrift: true }]);
  });

  it('image history lists every status', async () => {
    renderPanel({
      [OVERVIEW]: { body: overview({ activeTemplate: template(), activeTemplateMatchesConfig: true }) },
      [HISTORY]: {
        body: {
          templates: [
            template(),
            template({ id: 'a', status: 'superseded' }),
            template({ id: 'b', status: 'revoked' }),
            template({ id: 'c', status: 'failed', failureReason: 'provider error' }),
          ],
        },
      },
    });
    const table = await screen.findByRole('table', { name: 'Image history' });
    for (const status of ['active', 'superseded', 'revoked', 'failed']) expect(within(table).getByText(status)).toBeTruthy();
    expect(within(table).getByText('provider error')).toBeTruthy();
  });
});
