import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { environment, type FakeAnswer, fakeClient, overview, renderWithApi, session, template } from '../../test/fake-api.tsx';
import { CustomImagePanel } from './CustomImagePanel.tsx';

// The terminal has its own tests; here it reports what the panel told it and lets a test print.
vi.mock('../terminal/BrowserTerminal.tsx', () => ({
  BrowserTerminal: ({ capturing, onOutput }: { capturing?: boolean; onOutput?: () => void }) => (
    <div data-testid="browser-terminal">
      {capturing ? 'terminal capturing' : 'terminal live'}
      <button type="button" onClick={() => onOutput?.()}>
        print output
      </button>
    </div>
  ),
}));

const OVERVIEW = 'GET /api/environments/env_1/custom-image-template';
const HISTORY = 'GET /api/environments/env_1/custom-image-templates';
const SESSION = 'GET /api/environment-custom-image-setup-sessions/sess_1';
const CHANGES = 'GET /api/environment-custom-image-setup-sessions/sess_1/changes';
const START = 'POST /api/environments/env_1/custom-image-setup-sessions';

const changed = (paths: string[]) => ({
  body: {
    changes: paths.map((path) => ({ path, kind: 'added', sizeBytes: 5, type: 'file' })),
    warnings: [],
    totalBytes: 5 * paths.length,
    truncated: false,
  },
});

function renderPanel(routes: Record<string, FakeAnswer | ((r: { body: unknown }) => FakeAnswer | Promise<FakeAnswer>)>) {
  const api = fakeClient({ [HISTORY]: { body: { templates: [] } }, ...routes });
  renderWithApi(<CustomImagePanel environment={environment} providerName="Local (namespaces)" />, api.client);
  return api;
}

/** A promise the test settles when it chooses: the server's answer, held back. */
function held<T>() {
  let release!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

describe('Custom image panel: states between clicks', () => {
  it('the capture review refreshes by itself once terminal output goes quiet', async () => {
    let files = ['/workspace/a'];
    renderPanel({
      [OVERVIEW]: { body: overview({ activeSession: session() }) },
      [SESSION]: { body: { session: session(), connectionPayload: null } },
      [CHANGES]: () => changed(files),
    });
    const review = await screen.findByTestId('capture-review');
    expect(await within(review).findByText('/workspace/a')).toBeTruthy();
    files = ['/workspace/a', '/workspace/b'];
    // fireEvent: no focus moves, so only the output can be what refreshes the list.
    fireEvent.click(screen.getByRole('button', { name: 'print output' }));
    // No click on Refresh list: the quiet period after the output triggers the refresh.
    expect(await within(review).findByText('/workspace/b', undefined, { timeout: 4000 })).toBeTruthy();
  });

  it('the capture review refreshes when the window regains focus', async () => {
    let files: string[] = [];
    renderPanel({
      [OVERVIEW]: { body: overview({ activeSession: session() }) },
      [SESSION]: { body: { session: session(), connectionPayload: null } },
      [CHANGES]: () => changed(files),
    });
    const review = await screen.findByTestId('capture-review');
    expect(await within(review).findByText(/No files changed yet/)).toBeTruthy();
    files = ['/root/.config/tool/session'];
    act(() => {
      window.dispatchEvent(new Event('focus'));
    });
    expect(await within(review).findByText('/root/.config/tool/session')).toBeTruthy();
  });

  it('the capture review refreshes when focus comes back into the panel from elsewhere', async () => {
    let files: string[] = [];
    renderPanel({
      [OVERVIEW]: { body: overview({ activeSession: session() }) },
      [SESSION]: { body: { session: session(), connectionPayload: null } },
      [CHANGES]: () => changed(files),
    });
    const review = await screen.findByTestId('capture-review');
    expect(await within(review).findByText(/No files changed yet/)).toBeTruthy();
    files = ['/opt/tool/bin'];
    // Moving focus within the panel is not a return; arriving from outside it is.
    fireEvent.focusIn(screen.getByRole('button', { name: 'Finished' }), { relatedTarget: screen.getByRole('button', { name: 'Cancel' }) });
    fireEvent.focusIn(screen.getByRole('button', { name: 'Finished' }), { relatedTarget: document.body });
    expect(await within(review).findByText('/opt/tool/bin')).toBeTruthy();
  });

  it('during capture: "Capturing template", the terminal is told, and "Setup finished" only once captured', async () => {
    const capture = held<FakeAnswer>();
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
      [CHANGES]: changed(['/opt/tool']),
      'POST /api/environment-custom-image-setup-sessions/sess_1/finish': () => capture.promise,
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Finished' }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Capture image' }));

    const status = await screen.findByTestId('setup-status');
    expect(within(status).getByText('Capturing template')).toBeTruthy();
    expect(within(status).queryByText('Setup running')).toBeNull();
    expect(screen.getByTestId('browser-terminal').textContent).toContain('terminal capturing');
    expect(screen.queryByText(/Setup finished/)).toBeNull();
    // The review keeps the last list, and asking for it again is off while the capture runs.
    expect(within(screen.getByTestId('capture-review')).getByText('/opt/tool')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Refresh list' }) as HTMLButtonElement).disabled).toBe(true);

    finished = true;
    capture.release({ body: { session: session({ status: 'promoted' }), template: template() } });
    expect(await screen.findByText('Setup finished: the terminal closed when the image was captured.')).toBeTruthy();
    expect(screen.queryByTestId('browser-terminal')).toBeNull();
  });

  it('"Setup starting" shows while the start request runs', async () => {
    const start = held<FakeAnswer>();
    renderPanel({ [OVERVIEW]: { body: overview() }, [START]: () => start.promise });
    await userEvent.click(await screen.findByRole('button', { name: 'Configure image' }));
    const starting = await screen.findByTestId('setup-starting');
    expect(within(starting).getByText('Setup starting')).toBeTruthy();
    expect(within(starting).getByText(/Starting the setup sandbox…/)).toBeTruthy();
    start.release({ status: 201, body: { session: session({ status: 'starting' }), connectionPayload: null } });
  });

  it('a Refresh session says it starts, and started, from the active image', async () => {
    const start = held<FakeAnswer>();
    let started = false;
    renderPanel({
      [OVERVIEW]: () => ({
        body: started
          ? overview({ activeTemplate: template(), activeSession: session({ sourceTemplateId: 'tpl_2' }) })
          : overview({ activeTemplate: template(), activeTemplateMatchesConfig: true }),
      }),
      [SESSION]: { body: { session: session({ sourceTemplateId: 'tpl_2' }), connectionPayload: null } },
      [CHANGES]: changed([]),
      [START]: () => start.promise,
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Refresh' }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Start setup' }));
    expect(await screen.findByText(/Starting a refresh session from the active image…/)).toBeTruthy();
    started = true;
    start.release({ status: 201, body: { session: session({ sourceTemplateId: 'tpl_2' }), connectionPayload: null } });
    expect((await screen.findByTestId('setup-source')).textContent).toMatch(/started from the active image tpl_2/);
  });

  it('after Disable the panel reads "Not configured" without the old "Template captured" line', async () => {
    renderPanel({
      [OVERVIEW]: {
        body: overview({ latestSession: session({ status: 'promoted', finishedAt: new Date().toISOString() }) }),
      },
    });
    expect(await screen.findByText('Not configured')).toBeTruthy();
    expect(screen.queryByText('Template captured')).toBeNull();
    expect(screen.queryByTestId('setup-status')).toBeNull();
  });

  it('Cancel asks first when the session has changes, and backing out keeps the session', async () => {
    const api = renderPanel({
      [OVERVIEW]: { body: overview({ activeSession: session() }) },
      [SESSION]: { body: { session: session(), connectionPayload: null } },
      [CHANGES]: changed(['/opt/tool', '/root/.netrc']),
      'POST /api/environment-custom-image-setup-sessions/sess_1/cancel': { body: { session: session({ status: 'cancelled' }) } },
    });
    await within(await screen.findByTestId('capture-review')).findByText('/opt/tool');
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    const dialog = await screen.findByRole('alertdialog');
    expect(within(dialog).getByText(/2 changed paths/)).toBeTruthy();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Keep working' }));
    expect(api.calls.some((c) => c.path.endsWith('/cancel'))).toBe(false);

    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    fireEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Cancel setup' }));
    await waitFor(() => expect(api.calls.some((c) => c.path.endsWith('/cancel'))).toBe(true));
  });

  it('a running setup lists the ports of its sandbox with their URLs, and opens one', async () => {
    const port = {
      sessionId: 'sess_1',
      port: 8080,
      visibility: 'private',
      baseUrl: 'http://8080-sess-1.sandboxes.localhost:7420/',
      createdAt: '2026-11-30T18:00:00.000Z',
    };
    let open: (typeof port)[] = [];
    const api = renderPanel({
      [OVERVIEW]: { body: overview({ activeSession: session() }) },
      [SESSION]: { body: { session: session(), connectionPayload: null } },
      [CHANGES]: changed([]),
      'GET /api/environment-custom-image-setup-sessions/sess_1/ports': () => ({ body: { ports: open } }),
      'POST /api/environment-custom-image-setup-sessions/sess_1/ports': () => {
        open = [port];
        return { status: 201, body: port };
      },
    });
    const ports = await screen.findByTestId('open-ports');
    expect(await within(ports).findByText(/No open ports/)).toBeTruthy();
    expect(within(ports).getByText(/Every port closes when the session ends/)).toBeTruthy();
    fireEvent.change(within(ports).getByLabelText('Port to open in sess_1'), { target: { value: '8080' } });
    fireEvent.click(within(ports).getByRole('button', { name: 'Open port' }));
    expect(await within(ports).findByText(port.baseUrl)).toBeTruthy();
    expect(api.calls.find((c) => c.method === 'POST' && c.path.endsWith('/ports'))?.body).toEqual({ port: 8080 });
  });

  it('a setup that is not running (starting) offers no ports', async () => {
    renderPanel({
      [OVERVIEW]: { body: overview({ activeSession: session({ status: 'starting', providerLeaseId: null }) }) },
    });
    expect(await screen.findByText(/Starting the setup sandbox/)).toBeTruthy();
    expect(screen.queryByTestId('open-ports')).toBeNull();
  });
});
