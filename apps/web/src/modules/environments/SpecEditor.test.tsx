import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { environment, fakeClient, renderWithApi } from '../../test/fake-api.tsx';
import { SpecEditor } from './SpecEditor.tsx';

const withSpec = {
  ...environment,
  spec: { ...environment.spec, displayName: 'Build box', bootstrap: ['apt-get update', 'make deps'] },
};

const patched = (calls: ReturnType<typeof fakeClient>['calls']) => calls.find((c) => c.method === 'PATCH')?.body as { spec: unknown };

describe('Sandbox spec editor', () => {
  it('edits every field and saves the spec, which makes a new revision', async () => {
    const api = fakeClient({
      'PATCH /api/environments/env_1': {
        body: { ...withSpec, currentRevision: { id: 'rev_2', number: 2, createdAt: environment.createdAt } },
      },
    });
    renderWithApi(<SpecEditor environment={withSpec} />, api.client);
    const form = screen.getByRole('form', { name: 'Sandbox spec' });
    const save = within(form).getByRole('button', { name: 'Save spec' }) as HTMLButtonElement;
    expect(save.disabled).toBe(true);
    expect((screen.getByLabelText('Display name') as HTMLInputElement).value).toBe('Build box');
    await userEvent.type(screen.getByLabelText('Description'), 'CI builds');
    fireEvent.change(screen.getByLabelText('Durability'), { target: { value: 'provider_snapshot' } });
    fireEvent.change(screen.getByLabelText('Idle after (seconds)'), { target: { value: '600' } });
    fireEvent.change(screen.getByLabelText('When idle'), { target: { value: 'keep_running' } });
    // The list editor: reorder, remove, add.
    await userEvent.click(screen.getByRole('button', { name: 'Move command 2 up' }));
    expect((screen.getByLabelText('Bootstrap command 1') as HTMLInputElement).value).toBe('make deps');
    await userEvent.click(screen.getByRole('button', { name: 'Remove command 2' }));
    await userEvent.click(screen.getByRole('button', { name: 'Add command' }));
    await userEvent.type(screen.getByLabelText('Bootstrap command 2'), 'echo ready');
    // The network policy: deny now; an allowlist with two hosts, one a wildcard.
    expect((screen.getByRole('radio', { name: /^Deny/ }) as HTMLInputElement).checked).toBe(true);
    const allowlist = screen.getByRole('radio', { name: 'Allowlist of hosts' }) as HTMLInputElement;
    expect(document.getElementById(allowlist.getAttribute('aria-describedby') ?? '')?.textContent).toContain('not example.com itself');
    await userEvent.click(allowlist);
    await userEvent.type(screen.getByLabelText('Allowed hosts (one a line)'), 'registry.npmjs.org{Enter}{Enter}*.github.com');
    expect(save.disabled).toBe(false);
    await userEvent.click(save);
    await waitFor(() => expect(patched(api.calls)).toBeTruthy());
    expect(patched(api.calls)).toEqual({
      spec: {
        displayName: 'Build box',
        description: 'CI builds',
        durability: 'provider_snapshot',
        lifecycle: { idleAfterSeconds: 600, idleAction: 'keep_running' },
        bootstrap: ['make deps', 'echo ready'],
        containment: { network: 'allowlist', hosts: ['registry.npmjs.org', '*.github.com'] },
      },
    });
    expect(await screen.findByText('Saved as revision #2')).toBeTruthy();
  });

  it("offers allow, which takes no hosts, and shows the server's refusal at the network field", async () => {
    const api = fakeClient({
      'PATCH /api/environments/env_1': {
        status: 422,
        body: {
          error: {
            code: 'unprocessable',
            message:
              "the environment's spec is refused: spec.containment.network: the fake provider cannot put the egress proxy inside its sandboxes",
            details: {
              issues: [{ path: 'spec.containment.network', message: 'the fake provider cannot put the egress proxy inside its sandboxes' }],
            },
          },
        },
      },
    });
    renderWithApi(<SpecEditor environment={withSpec} />, api.client);
    await userEvent.click(screen.getByRole('radio', { name: /^Allow: any public host/ }));
    expect(screen.queryByLabelText('Allowed hosts (one a line)')).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Save spec' }));
    await waitFor(() => expect(patched(api.calls)).toBeTruthy());
    expect((patched(api.calls).spec as { containment: unknown }).containment).toEqual({ network: 'allow', hosts: [] });
    expect((await screen.findByTestId('field-error-spec.containment.network')).textContent).toContain('cannot put the egress proxy');
  });

  it("the server's messages show at their fields (a bootstrap command, the idle time)", async () => {
    const api = fakeClient({
      'PATCH /api/environments/env_1': {
        status: 400,
        body: {
          error: {
            code: 'validation_failed',
            message: 'the spec is invalid',
            details: {
              issues: [
                { path: 'spec.bootstrap.1', message: 'looks like it holds a credential' },
                { path: 'spec.lifecycle.idleAfterSeconds', message: 'Too small: expected number to be >=10' },
              ],
            },
          },
        },
      },
    });
    renderWithApi(<SpecEditor environment={withSpec} />, api.client);
    fireEvent.change(screen.getByLabelText('Idle after (seconds)'), { target: { value: '5' } });
    await userEvent.click(screen.getByRole('button', { name: 'Save spec' }));
    expect((await screen.findByTestId('field-error-spec.bootstrap.1')).textContent).toBe('looks like it holds a credential');
    expect(screen.getByLabelText('Bootstrap command 2').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByTestId('field-error-spec.lifecycle.idleAfterSeconds').textContent).toContain('>=10');
  });
});
