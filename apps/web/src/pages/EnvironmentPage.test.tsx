import { fireEvent, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Navigate, Route, Routes } from 'react-router';
import { describe, expect, it } from 'vitest';
import { environment, fakeClient, overview, renderWithApi } from '../test/fake-api.tsx';
import { EnvironmentPage } from './EnvironmentPage.tsx';

const local = {
  provider: 'local',
  displayName: 'Local (namespaces)',
  available: true,
  capabilities: {},
  configSchema: { type: 'object', properties: { cpu: { type: 'number', exclusiveMinimum: 0, maximum: 256, default: 1 } } },
};

describe('Environment page configuration', () => {
  it('a config error from the API shows at its field and clears on the next edit', async () => {
    const api = fakeClient({
      'GET /api/environments/env_1': { body: { ...environment, provider: 'local' } },
      'GET /api/sandbox-targets': { body: { targets: [local] } },
      'GET /api/environments/env_1/revisions': { body: { revisions: [] } },
      'GET /api/environments/env_1/custom-image-template': { body: overview() },
      'GET /api/environments/env_1/custom-image-templates': { body: { templates: [] } },
      'PATCH /api/environments/env_1': {
        status: 400,
        body: {
          error: {
            code: 'validation_failed',
            message: 'the local config is invalid: Too big',
            details: { issues: [{ path: 'config.cpu', message: 'Too big: expected number to be <=256' }] },
          },
        },
      },
    });
    renderWithApi(
      <Routes>
        <Route path="/" element={<Navigate to="/environments/env_1" />} />
        <Route path="/environments/:id" element={<EnvironmentPage />} />
      </Routes>,
      api.client,
    );
    const form = (await screen.findByRole('form', { name: 'Configuration' })) as HTMLFormElement;
    expect(form.noValidate).toBe(true);
    expect(screen.getAllByText('Local (namespaces)').length).toBeGreaterThan(0);
    const cpu = screen.getByLabelText(/^CPU/);
    fireEvent.change(cpu, { target: { value: '300' } });
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByTestId('field-error-cpu')).textContent).toBe('Too big: expected number to be <=256');
    fireEvent.change(cpu, { target: { value: '3' } });
    expect(screen.queryByTestId('field-error-cpu')).toBeNull();
  });
});
