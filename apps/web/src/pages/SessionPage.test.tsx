import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Navigate, Route, Routes } from 'react-router';
import { describe, expect, it, vi } from 'vitest';
import { agent, agentSession, environment, fakeClient, renderWithApi, sandbox as sandboxBody, sessionSandbox } from '../test/fake-api.tsx';
import { SessionPage } from './SessionPage.tsx';

// jsdom has no canvas: the terminal's xterm is a stand-in here (BrowserTerminal.test.tsx drives the real socket logic).
vi.mock('@xterm/xterm', () => ({
  Terminal: class {
    cols = 100;
    rows = 30;
    loadAddon() {}
    open() {}
    onData() {}
    onResize() {}
    focus() {}
    dispose() {}
    write() {}
  },
}));
vi.mock('@xterm/addon-fit', () => ({
  FitAddon: class {
    fit() {}
  },
}));

type SandboxOverrides = Parameters<typeof sessionSandbox>[0];

function api(sandbox: SandboxOverrides = {}, extra: Parameters<typeof fakeClient>[0] = {}) {
  return fakeClient({
    'GET /api/sessions/ses_1': { body: agentSession() },
    'GET /api/sessions/ses_1/sandbox': { body: sessionSandbox(sandbox) },
    'GET /api/agents/agt_1': {
      body: agent({ mode: 'fixed', default: 'default', bindings: { default: { environmentRevisionId: 'rev_1' } } }),
    },
    'GET /api/environments/env_1': { body: environment },
    'GET /api/sandbox-targets': {
      body: { targets: [{ provider: 'daytona', displayName: 'Daytona', available: true, capabilities: {}, configSchema: {} }] },
    },
    ...extra,
  });
}

function renderPage(client: ReturnType<typeof api>, path = '/sessions/ses_1') {
  return renderWithApi(
    <Routes>
      <Route path="/" element={<Navigate to={path} />} />
      <Route path="/sessions/:id" element={<SessionPage />} />
    </Routes>,
    client.client,
  );
}

const field = (name: string) => screen.getByTestId(`workspace-${name}`);
const button = (name: string) => screen.getByRole('button', { name }) as HTMLButtonElement;

describe('Session Workspace tab', () => {
  it('shows every field of the primary sandbox', async () => {
    renderPage(
      api({
        imageId: 'tpl_7',
        generation: 4,
        containment: { network: 'deny', hosts: [], networkEnforced: false },
        capabilities: {
          nativeProcesses: true,
          packages: false,
          pty: true,
          ports: false,
          portableCheckpoint: false,
          networkEnforced: false,
        },
        recoveryClass: 'files survive a replacement; processes do not',
        durability: 'checkpointed',
        lastActivityAt: new Date(Date.now() - 120_000).toISOString(),
      }),
    );
    expect(await screen.findByRole('tab', { name: 'Workspace', selected: true })).toBeTruthy();
    await screen.findByTestId('workspace-sandbox-id');
    expect(within(field('sandbox-id')).getByText('sbx_1')).toBeTruthy();
    expect(within(field('sandbox-id')).getByRole('button', { name: 'Copy sandbox id' })).toBeTruthy();
    expect(within(field('binding')).getByText('default')).toBeTruthy();
    const revisionLink = within(field('revision')).getByRole('link', { name: '#1' });
    expect(revisionLink.getAttribute('href')).toBe('/environments/env_1#revisions');
    await waitFor(() => expect(field('revision').textContent).toBe('build#1'));
    expect(within(field('image')).getByText('tpl_7')).toBeTruthy();
    await waitFor(() => expect(field('target').textContent).toBe('Daytona'));
    expect(field('containment').textContent).toContain('deny');
    expect(field('containment').textContent).toContain('does not enforce');
    const capabilities = within(field('capabilities'))
      .getAllByRole('listitem')
      .map((li) => li.textContent);
    expect(capabilities).toContain('has terminal');
    expect(capabilities).toContain('lacks packages');
    expect(field('recovery').textContent).toContain('files survive a replacement; processes do not');
    expect(field('recovery').textContent).toContain('checkpointed');
    expect(field('generation').textContent).toBe('4');
    expect(within(field('state')).getByTestId('sandbox-state').textContent).toMatch(/ready.*running/);
    expect(field('last-activity').textContent).toContain('2 min ago');
    expect(field('lifecycle').textContent).toContain('180 s');
  });

  it('enables Stop and End when the server allows them, and disables Start with the reason', async () => {
    renderPage(api({ allowedActions: ['exec', 'terminal', 'stop', 'end'] }));
    await screen.findByTestId('workspace-sandbox-id');
    expect(button('Stop').disabled).toBe(false);
    expect(button('End session').disabled).toBe(false);
    const start = button('Start');
    expect(start.disabled).toBe(true);
    expect(document.getElementById(start.getAttribute('aria-describedby') ?? '')?.textContent).toBe('The sandbox is already running.');
  });

  it('a stopped sandbox: Start enabled, Stop disabled with the reason', async () => {
    renderPage(api({ desiredState: 'stopped', observedState: 'stopped', allowedActions: ['start', 'end'] }));
    await screen.findByTestId('workspace-sandbox-id');
    expect(button('Start').disabled).toBe(false);
    const stop = button('Stop');
    expect(stop.disabled).toBe(true);
    expect(document.getElementById(stop.getAttribute('aria-describedby') ?? '')?.textContent).toBe('The sandbox is already stopped.');
  });

  it('an ended session offers nothing, and says why', async () => {
    const client = api(
      { desiredState: 'deleted', observedState: 'deleted', allowedActions: [] },
      { 'GET /api/sessions/ses_1': { body: agentSession({ status: 'ended', endedAt: new Date().toISOString() }) } },
    );
    renderPage(client);
    await screen.findByTestId('workspace-sandbox-id');
    for (const name of ['Stop', 'Start', 'End session']) {
      expect(button(name).disabled).toBe(true);
      expect(button(name).title).toBe('The session has ended.');
    }
  });

  it('Stop calls the session sandbox route; End asks first, then ends the session', async () => {
    const client = api(
      {},
      {
        // The server answers with the sandbox itself, as POST /api/sandboxes/:id/stop does.
        'POST /api/sessions/ses_1/sandbox/stop': { body: sandboxBody({ desiredStatus: 'stopped', status: 'stopped', sessionId: 'ses_1' }) },
        'POST /api/sessions/ses_1/end': { body: agentSession({ status: 'ended' }) },
      },
    );
    renderPage(client);
    await screen.findByTestId('workspace-sandbox-id');
    await userEvent.click(button('Stop'));
    await waitFor(() => expect(client.calls.some((c) => c.path === '/api/sessions/ses_1/sandbox/stop')).toBe(true));
    await userEvent.click(button('End session'));
    const dialog = await screen.findByRole('alertdialog');
    expect(client.calls.some((c) => c.path === '/api/sessions/ses_1/end')).toBe(false);
    await userEvent.click(within(dialog).getByRole('button', { name: 'End session' }));
    await waitFor(() => expect(client.calls.some((c) => c.method === 'POST' && c.path === '/api/sessions/ses_1/end')).toBe(true));
  });

  it('a session without a sandbox says so and can still be ended', async () => {
    const client = api({}, { 'GET /api/sessions/ses_1': { body: agentSession({ primarySandboxId: null, bindingName: null }) } });
    renderPage(client);
    expect((await screen.findByTestId('no-sandbox')).textContent).toContain('no sandbox');
    expect(screen.queryByRole('button', { name: 'Stop' })).toBeNull();
    expect(button('End session').disabled).toBe(false);
    expect(client.calls.some((c) => c.path === '/api/sessions/ses_1/sandbox')).toBe(false);
  });

  it('the Terminal tab holds the browser terminal and a command runner for the session', async () => {
    renderPage(api());
    await userEvent.click(await screen.findByRole('tab', { name: 'Terminal' }));
    expect(screen.getByRole('tab', { name: 'Terminal', selected: true })).toBeTruthy();
    expect(screen.getByTestId('browser-terminal')).toBeTruthy();
    expect(screen.getByRole('application', { name: 'Session sandbox shell' })).toBeTruthy();
    expect(screen.getByLabelText('Command to run in ses_1')).toBeTruthy();
  });

  it('a load error is shown with a retry', async () => {
    const client = fakeClient({
      'GET /api/sessions/ses_1': { status: 404, body: { error: { code: 'not_found', message: 'no session ses_1' } } },
    });
    renderPage(client);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('no session ses_1');
    expect(within(alert).getByRole('button', { name: 'Retry' })).toBeTruthy();
  });
});
