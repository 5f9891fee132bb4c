import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { agent, environment, fakeClient, renderWithApi, revision } from '../../test/fake-api.tsx';
import { AgentForm } from './AgentForm.tsx';

/** `build` at revision #2 (rev_2), its #1 (rev_1) older; `scratch` at #1 only. */
const build = { ...environment, currentRevision: { id: 'rev_2', number: 2, createdAt: environment.createdAt } };
const scratch = {
  ...environment,
  id: 'env_2',
  name: 'scratch',
  currentRevision: { id: 'rev_s1', number: 1, createdAt: environment.createdAt },
};

function api(extra: Parameters<typeof fakeClient>[0] = {}) {
  return fakeClient({
    'GET /api/environments': { body: { environments: [build, scratch] } },
    'GET /api/environments/env_1/revisions': {
      body: { revisions: [revision({ id: 'rev_2', number: 2, spec: { ...environment.spec, durability: 'checkpointed' } }), revision()] },
    },
    'GET /api/environments/env_2/revisions': { body: { revisions: [revision({ id: 'rev_s1', environmentId: 'env_2' })] } },
    ...extra,
  });
}

const sent = (calls: ReturnType<typeof fakeClient>['calls'], method: string) =>
  calls.find((c) => c.method === method)?.body as Record<string, unknown>;

describe('Agent policy editor', () => {
  it('explains every mode in a sentence', async () => {
    renderWithApi(<AgentForm />, api().client);
    for (const [label, words] of [
      ['Fixed', 'Every session gets the single configured sandbox'],
      ['Selectable', 'pick one of the agent'],
      ['Configurable', 'one-off configuration'],
      ['No sandbox', 'no primary sandbox'],
    ] as const) {
      const radio = screen.getByRole('radio', { name: new RegExp(`^${label}`) });
      expect(screen.getByText(new RegExp(words)).id).toBe(radio.getAttribute('aria-describedby'));
    }
  });

  it('a new fixed agent shows one binding, pinned to the latest revision, and creates with it', async () => {
    const created = agent(
      { mode: 'fixed', default: 'default', bindings: { default: { environmentRevisionId: 'rev_2' } } },
      { id: 'agt_9' },
    );
    const client = api({ 'POST /api/agents': { body: created } });
    renderWithApi(<AgentForm />, client.client);
    const binding = await screen.findByRole('group', { name: 'Binding default' });
    expect(screen.getAllByRole('group', { name: /^Binding / })).toHaveLength(1);
    expect(screen.queryByRole('button', { name: 'Add binding' })).toBeNull();
    expect(screen.queryByLabelText('Default binding')).toBeNull();
    await waitFor(() => expect((within(binding).getByLabelText('Revision') as HTMLSelectElement).value).toBe('rev_2'));
    expect(within(binding).getByRole('option', { name: '#2 (latest)' })).toBeTruthy();
    await userEvent.type(screen.getByLabelText('Name'), 'coder');
    await userEvent.click(screen.getByRole('switch', { name: 'Sandbox fleet' }));
    await userEvent.click(screen.getByRole('button', { name: 'Create agent' }));
    await waitFor(() => expect(sent(client.calls, 'POST')).toBeTruthy());
    expect(sent(client.calls, 'POST')).toEqual({
      name: 'coder',
      displayName: null,
      description: null,
      sandboxPolicy: { mode: 'fixed', default: 'default', bindings: { default: { environmentRevisionId: 'rev_2' } } },
      capabilities: ['sandbox_fleet'],
    });
  });

  it('selectable: bindings can be added, each with its environment and revision, and a default is chosen', async () => {
    const client = api({ 'POST /api/agents': { body: agent({ mode: 'selectable', default: 'default', bindings: {} }) } });
    renderWithApi(<AgentForm />, client.client);
    await screen.findByRole('group', { name: 'Binding default' });
    await userEvent.click(screen.getByRole('radio', { name: /^Selectable/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Add binding' }));
    const second = screen.getByRole('group', { name: 'Binding binding-2' });
    const name = within(second).getByLabelText('Binding name');
    await userEvent.clear(name);
    await userEvent.type(name, 'fast');
    fireEvent.change(within(second).getByLabelText('Environment'), { target: { value: 'env_2' } });
    expect((within(second).getByLabelText('Revision') as HTMLSelectElement).value).toBe('rev_s1');
    fireEvent.change(within(second).getByLabelText('Durability'), { target: { value: 'checkpointed' } });
    fireEvent.change(screen.getByLabelText('Default binding'), { target: { value: 'fast' } });
    await userEvent.type(screen.getByLabelText('Name'), 'picker');
    await userEvent.click(screen.getByRole('button', { name: 'Create agent' }));
    await waitFor(() => expect(sent(client.calls, 'POST')).toBeTruthy());
    expect(sent(client.calls, 'POST').sandboxPolicy).toEqual({
      mode: 'selectable',
      default: 'fast',
      bindings: { default: { environmentRevisionId: 'rev_2' }, fast: { environmentRevisionId: 'rev_s1', durability: 'checkpointed' } },
    });
  });

  it('configurable keeps the bindings; none sends no bindings and no default', async () => {
    const client = api({ 'POST /api/agents': { body: agent({ mode: 'none', default: null, bindings: {} }) } });
    renderWithApi(<AgentForm />, client.client);
    await screen.findByRole('group', { name: 'Binding default' });
    await userEvent.click(screen.getByRole('radio', { name: /^Configurable/ }));
    expect(screen.getByRole('group', { name: 'Binding default' })).toBeTruthy();
    expect(screen.getByLabelText('Default binding')).toBeTruthy();
    await userEvent.click(screen.getByRole('radio', { name: /^No sandbox/ }));
    expect(screen.queryByRole('group', { name: /^Binding / })).toBeNull();
    await userEvent.type(screen.getByLabelText('Name'), 'talker');
    await userEvent.click(screen.getByRole('button', { name: 'Create agent' }));
    await waitFor(() => expect(sent(client.calls, 'POST')).toBeTruthy());
    expect(sent(client.calls, 'POST').sandboxPolicy).toEqual({ mode: 'none', default: null, bindings: {} });
  });

  it('a binding pinned to an older revision says a newer one exists, and Use latest pins it', async () => {
    const existing = agent({ mode: 'fixed', default: 'default', bindings: { default: { environmentRevisionId: 'rev_1' } } });
    const client = api({ 'PATCH /api/agents/agt_1': { body: existing } });
    renderWithApi(<AgentForm agent={existing} />, client.client);
    const binding = await screen.findByRole('group', { name: 'Binding default' });
    const hint = await within(binding).findByText(/A newer revision is available/);
    expect(hint.textContent).toContain('#2');
    expect(hint.textContent).toContain('#1');
    expect((within(binding).getByLabelText('Revision') as HTMLSelectElement).value).toBe('rev_1');
    await userEvent.click(within(binding).getByRole('button', { name: 'Use latest' }));
    expect((within(binding).getByLabelText('Revision') as HTMLSelectElement).value).toBe('rev_2');
    expect(within(binding).queryByText(/A newer revision is available/)).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent(client.calls, 'PATCH')).toBeTruthy());
    expect(sent(client.calls, 'PATCH').sandboxPolicy).toEqual({
      mode: 'fixed',
      default: 'default',
      bindings: { default: { environmentRevisionId: 'rev_2' } },
    });
  });

  it('switching a selectable agent to fixed shows only its first binding and sends only that one', async () => {
    const existing = agent({
      mode: 'selectable',
      default: 'big',
      bindings: { small: { environmentRevisionId: 'rev_2' }, big: { environmentRevisionId: 'rev_s1' } },
    });
    const client = api({ 'PATCH /api/agents/agt_1': { body: existing } });
    renderWithApi(<AgentForm agent={existing} />, client.client);
    expect(await screen.findAllByRole('group', { name: /^Binding / })).toHaveLength(2);
    await userEvent.click(screen.getByRole('radio', { name: /^Fixed/ }));
    expect(screen.getAllByRole('group', { name: /^Binding / }).map((g) => g.getAttribute('aria-label'))).toEqual(['Binding small']);
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent(client.calls, 'PATCH')).toBeTruthy());
    expect(sent(client.calls, 'PATCH').sandboxPolicy).toEqual({
      mode: 'fixed',
      default: 'small',
      bindings: { small: { environmentRevisionId: 'rev_2' } },
    });
  });

  it("the server's messages show at their fields (sandboxPolicy.default, a binding, the name)", async () => {
    const client = api({
      'POST /api/agents': {
        status: 400,
        body: {
          error: {
            code: 'validation_failed',
            message: 'the agent is invalid',
            details: {
              issues: [
                { path: 'name', message: 'use 1-63 lowercase letters' },
                { path: 'sandboxPolicy.default', message: 'name one of the bindings (default)' },
                { path: 'sandboxPolicy.bindings.default.environmentRevisionId', message: 'no such revision' },
              ],
            },
          },
        },
      },
    });
    renderWithApi(<AgentForm />, client.client);
    await screen.findByRole('group', { name: 'Binding default' });
    await userEvent.click(screen.getByRole('radio', { name: /^Selectable/ }));
    await userEvent.type(screen.getByLabelText('Name'), 'Bad Name');
    await userEvent.click(screen.getByRole('button', { name: 'Create agent' }));
    expect((await screen.findByTestId('field-error-name')).textContent).toBe('use 1-63 lowercase letters');
    expect(screen.getByTestId('field-error-sandboxPolicy.default').textContent).toBe('name one of the bindings (default)');
    expect(screen.getByTestId('field-error-sandboxPolicy.bindings.default').textContent).toBe('no such revision');
    expect(screen.getByLabelText('Default binding').getAttribute('aria-invalid')).toBe('true');
    // The next edit clears them.
    await userEvent.type(screen.getByLabelText('Name'), 'x');
    expect(screen.queryByTestId('field-error-name')).toBeNull();
  });
});
