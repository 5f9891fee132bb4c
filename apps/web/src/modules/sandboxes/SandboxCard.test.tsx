import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeClient, renderWithApi, sandbox as sandboxOf } from '../../test/fake-api.tsx';
import { SandboxCard } from './SandboxCard.tsx';

const sandbox = sandboxOf({
  id: 'sbx_0123456789abcdef',
  imageId: 'tpl_2',
  createdAt: new Date(Date.now() - 120_000).toISOString(),
});

describe('Sandbox card header', () => {
  it('keeps id, status, age and Delete on one row, with copy buttons for the ids', () => {
    renderWithApi(<SandboxCard sandbox={sandbox} environmentName="build" />, fakeClient({}).client);
    const card = screen.getByTestId('sandbox-card');
    const header = card.querySelector('header') as HTMLElement;
    const firstRow = header.firstElementChild as HTMLElement;
    expect(firstRow.className).not.toMatch(/flex-wrap/);
    const row = within(firstRow);
    expect(row.getByText('sbx_0123456789abcdef')).toBeTruthy();
    expect(row.getByText('running')).toBeTruthy();
    expect(row.getByText('2 min ago')).toBeTruthy();
    expect(row.getByRole('button', { name: 'Delete' })).toBeTruthy();
    expect(row.getByRole('button', { name: 'Copy sandbox id' })).toBeTruthy();
    expect(within(screen.getByTestId('sandbox-image')).getByRole('button', { name: 'Copy image id' })).toBeTruthy();
    // No egress proxy, no egress line.
    expect(screen.queryByTestId('sandbox-egress')).toBeNull();
  });

  it('says what a sandbox with egress moved through the proxy', () => {
    const moved = sandboxOf({ id: 'sbx_2', egress: { sentBytes: 2048, receivedBytes: 3 * 1024 * 1024 } });
    renderWithApi(<SandboxCard sandbox={moved} environmentName="build" />, fakeClient({}).client);
    expect(screen.getByTestId('sandbox-egress').textContent).toMatch(/Egress 2(\.0)? KiB out, 3(\.0)? MiB in/);
  });
});

describe('Sandbox card lifecycle', () => {
  it('shows desired beside observed state and the generation, and Stop asks the API to stop it', async () => {
    const stopping = sandboxOf({ id: 'sbx_1', desiredStatus: 'stopped', status: 'running', generation: 3 });
    const api = fakeClient({ 'POST /api/sandboxes/sbx_1/stop': { body: stopping } });
    renderWithApi(<SandboxCard sandbox={sandboxOf({ id: 'sbx_1', generation: 3 })} environmentName="build" />, api.client);
    const state = screen.getByTestId('sandbox-state');
    expect(state.textContent).toContain('ready');
    expect(state.textContent).toContain('running');
    expect(state.textContent).not.toContain('moving');
    expect(screen.getByText('Generation').parentElement?.textContent).toContain('3');
    expect(screen.queryByRole('button', { name: 'Start' })).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Stop' }));
    await waitFor(() => expect(api.calls.some((c) => c.method === 'POST' && c.path === '/api/sandboxes/sbx_1/stop')).toBe(true));
  });

  it('a stopped sandbox offers Start, and one still moving says so', async () => {
    const api = fakeClient({ 'POST /api/sandboxes/sbx_1/start': { body: sandboxOf({ id: 'sbx_1', status: 'starting' }) } });
    const { unmount } = renderWithApi(
      <SandboxCard sandbox={sandboxOf({ id: 'sbx_1', desiredStatus: 'stopped', status: 'stopped' })} environmentName="build" />,
      api.client,
    );
    expect(screen.queryByRole('button', { name: 'Stop' })).toBeNull();
    expect((screen.getByRole('button', { name: 'Run' }) as HTMLButtonElement).disabled).toBe(true);
    await userEvent.click(screen.getByRole('button', { name: 'Start' }));
    await waitFor(() => expect(api.calls.some((c) => c.path === '/api/sandboxes/sbx_1/start')).toBe(true));
    unmount();
    renderWithApi(
      <SandboxCard sandbox={sandboxOf({ id: 'sbx_1', desiredStatus: 'ready', status: 'starting' })} environmentName="build" />,
      api.client,
    );
    expect(screen.getByTestId('sandbox-state').textContent).toContain('moving');
  });

  it('a failed sandbox offers neither Stop nor Start', () => {
    renderWithApi(
      <SandboxCard sandbox={sandboxOf({ status: 'failed', failureReason: 'boom' })} environmentName="build" />,
      fakeClient({}).client,
    );
    expect(screen.queryByRole('button', { name: 'Stop' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Start' })).toBeNull();
  });
});
