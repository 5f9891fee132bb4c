import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { HostNetworkWarning } from '../modules/environments/HostNetworkWarning.tsx';
import { fakeClient, renderWithApi } from '../test/fake-api.tsx';
import { SettingsPage } from './SettingsPage.tsx';

const settings = (allowHostNetwork: boolean) => ({
  body: {
    experimental: { enableEnvironments: true, enableSandboxDuplexBridge: false },
    security: { allowHostNetwork, allowPublicPorts: false },
    egress: { allowPrivateHosts: [] },
    sessions: { inlineProviders: [], inlineConfigFields: ['cpu', 'memoryMb'], checkpointRetention: 20 },
    fleet: { maxSandboxesPerSession: 5, maxCpusPerSession: 8, maxMemoryMbPerSession: 16384 },
  },
});
const authSession = (deploymentMode: 'local_trusted' | 'authenticated') => ({
  body: {
    deploymentMode,
    authenticated: true,
    role: 'admin',
    via: deploymentMode === 'local_trusted' ? 'local' : 'cookie',
    expiresAt: null,
  },
});

describe('Settings → Security → Allow host network', () => {
  it('authenticated mode: off by default, turning it on sends the patch and shows the warning', async () => {
    let allowed = false;
    const { client, calls } = fakeClient({
      'GET /api/auth/session': authSession('authenticated'),
      'GET /api/instance/settings': () => settings(allowed),
      'PATCH /api/instance/settings': ({ body }) => {
        allowed = (body as { security: { allowHostNetwork: boolean } }).security.allowHostNetwork;
        return settings(allowed);
      },
    });
    renderWithApi(<SettingsPage />, client);
    const toggle = await screen.findByRole('switch', { name: 'Allow host network' });
    await waitFor(() => expect((toggle as HTMLButtonElement).disabled).toBe(false));
    expect(toggle.getAttribute('aria-checked')).toBe('false');
    expect(screen.queryByTestId('host-network-allowed')).toBeNull();
    fireEvent.click(toggle);
    expect(await screen.findByTestId('host-network-allowed')).toBeTruthy();
    expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ security: { allowHostNetwork: true } });
  });

  it('local_trusted mode: the switch is off, disabled, and says why', async () => {
    const { client } = fakeClient({
      'GET /api/auth/session': authSession('local_trusted'),
      'GET /api/instance/settings': settings(true),
    });
    renderWithApi(<SettingsPage />, client);
    await screen.findByText(/Unavailable in local_trusted mode/);
    const toggle = screen.getByRole('switch', { name: 'Allow host network' }) as HTMLButtonElement;
    expect(toggle.disabled).toBe(true);
    expect(toggle.getAttribute('aria-checked')).toBe('false');
    expect(screen.queryByTestId('host-network-allowed')).toBeNull();
  });
});

describe('HostNetworkWarning (environment form)', () => {
  const render = (mode: 'local_trusted' | 'authenticated', allowed: boolean, config: Record<string, unknown>) =>
    renderWithApi(
      <HostNetworkWarning config={config} />,
      fakeClient({ 'GET /api/auth/session': authSession(mode), 'GET /api/instance/settings': settings(allowed) }).client,
    );

  it('says nothing for network none', () => {
    render('authenticated', true, { network: 'none' });
    expect(screen.queryByTestId('host-network-warning')).toBeNull();
  });

  it('warns and says the server refuses it in local_trusted mode', async () => {
    render('local_trusted', true, { network: 'host' });
    expect(await screen.findByText(/refuses host networking/)).toBeTruthy();
    expect(screen.getByTestId('host-network-warning').textContent).toContain("this server's API");
  });

  it('points at the setting while it is off, and acknowledges it when on', async () => {
    render('authenticated', false, { network: 'host' });
    expect(await screen.findByText(/must turn on Settings → Security → Allow host network/)).toBeTruthy();
  });

  it('acknowledges the setting when it is on', async () => {
    render('authenticated', true, { network: 'host' });
    expect(await screen.findByText(/This instance allows it/)).toBeTruthy();
  });
});

describe('Settings → Fleet', () => {
  it('shows the limits and saves a change as one patch', async () => {
    const { client, calls } = fakeClient({
      'GET /api/auth/session': authSession('authenticated'),
      'GET /api/instance/settings': settings(false),
      'PATCH /api/instance/settings': settings(false),
    });
    renderWithApi(<SettingsPage />, client);
    const count = (await screen.findByLabelText('Resource sandboxes per session')) as HTMLInputElement;
    expect(count.value).toBe('5');
    expect((screen.getByLabelText('Memory per session (MiB)') as HTMLInputElement).value).toBe('16384');
    fireEvent.change(count, { target: { value: '2' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save fleet limits' }));
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({
        fleet: { maxSandboxesPerSession: 2, maxCpusPerSession: 8, maxMemoryMbPerSession: 16384 },
      }),
    );
  });
});
