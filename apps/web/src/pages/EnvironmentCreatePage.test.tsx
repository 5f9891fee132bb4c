import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeClient, renderWithApi } from '../test/fake-api.tsx';
import { EnvironmentCreatePage } from './EnvironmentCreatePage.tsx';

const docker = {
  provider: 'docker',
  displayName: 'Docker',
  available: true,
  capabilities: {},
  configSchema: {
    type: 'object',
    properties: {
      image: { type: 'string', description: 'the Docker image to boot, e.g. debian:bookworm' },
      cpu: { type: 'number', exclusiveMinimum: 0, maximum: 256 },
      env: { type: 'object', additionalProperties: { type: 'string' }, default: {} },
    },
    required: ['image'],
  },
};
const TARGETS = { 'GET /api/sandbox-targets': { body: { targets: [docker] } } };

function renderForm(routes: Parameters<typeof fakeClient>[0] = {}) {
  const api = fakeClient({ ...TARGETS, ...routes });
  renderWithApi(<EnvironmentCreatePage />, api.client);
  return api;
}

async function pickDocker() {
  await userEvent.click(await screen.findByRole('radio', { name: /Docker/ }));
}

describe('Create environment form', () => {
  it('says "Provider" once and shows hints in words, not raw schema', async () => {
    renderForm();
    await pickDocker();
    expect(screen.getAllByText('Provider', { exact: true }).filter((el) => !el.classList.contains('sr-only'))).toHaveLength(1);
    expect(screen.getByText('more than 0, up to 256')).toBeTruthy();
    expect(screen.queryByText(/default \{\}/)).toBeNull();
    expect(screen.queryByText(/>0/)).toBeNull();
  });

  it('uses its own messages, not the browser’s: noValidate, and the field says what is missing', async () => {
    const api = renderForm();
    await pickDocker();
    const form = screen.getByRole('form', { name: 'Create environment' }) as HTMLFormElement;
    expect(form.noValidate).toBe(true);
    expect(form.querySelectorAll('[required],[pattern]')).toHaveLength(0);
    await userEvent.type(screen.getByLabelText('Name', { exact: true }), 'Bad Name');
    await userEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    expect(screen.getByTestId('name-error').textContent).toMatch(/lowercase letters/);
    expect(screen.getByTestId('field-error-image').textContent).toBe('Required — the Docker image to boot, e.g. debian:bookworm');
    expect(api.calls.some((c) => c.method === 'POST')).toBe(false);
  });

  it('a config error from the API shows at its field', async () => {
    renderForm({
      'POST /api/environments': {
        status: 400,
        body: {
          error: {
            code: 'validation_failed',
            message: 'the docker config is invalid: Too big',
            details: { issues: [{ path: 'config.cpu', message: 'at most 256 CPUs' }] },
          },
        },
      },
    });
    await pickDocker();
    await userEvent.type(screen.getByLabelText('Name', { exact: true }), 'build');
    await userEvent.type(screen.getByLabelText(/^Image/), 'debian:bookworm');
    fireEvent.change(screen.getByLabelText(/^CPU/), { target: { value: '300' } });
    await userEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    expect((await screen.findByTestId('field-error-cpu')).textContent).toBe('at most 256 CPUs');
    expect(screen.getByLabelText(/^CPU/).getAttribute('aria-invalid')).toBe('true');
  });

  it('a stale "already exists" clears when the name changes', async () => {
    renderForm({
      'POST /api/environments': {
        status: 409,
        body: { error: { code: 'conflict', message: 'an environment named "build" already exists; choose another name or edit that one' } },
      },
    });
    await pickDocker();
    const nameInput = screen.getByLabelText('Name', { exact: true });
    await userEvent.type(nameInput, 'build');
    await userEvent.type(screen.getByLabelText(/^Image/), 'debian:bookworm');
    await userEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    expect((await screen.findByTestId('name-error')).textContent).toMatch(/already exists/);
    await userEvent.type(nameInput, '-2');
    await waitFor(() => expect(screen.queryByText(/already exists/)).toBeNull());
    expect(within(screen.getByRole('form', { name: 'Create environment' })).queryByRole('alert')).toBeNull();
  });
});
