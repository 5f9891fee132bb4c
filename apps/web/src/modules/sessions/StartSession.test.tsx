import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Route, Routes } from 'react-router';
import { describe, expect, it } from 'vitest';
import { agent, agentSession, environment, fakeClient, renderWithApi, revision } from '../../test/fake-api.tsx';
import { StartSession } from './StartSession.tsx';

const fixed = agent(
  { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: 'rev_1' } } },
  { id: 'agt_fixed', name: 'fixed-one' },
);
const selectable = agent(
  {
    mode: 'selectable',
    default: 'small',
    bindings: { small: { environmentRevisionId: 'rev_1' }, big: { environmentRevisionId: 'rev_1', durability: 'checkpointed' } },
  },
  { id: 'agt_pick', name: 'picker' },
);
const none = agent({ mode: 'none', default: null, bindings: {} }, { id: 'agt_none', name: 'talker' });

function api() {
  return fakeClient({
    'GET /api/agents': { body: { agents: [fixed, selectable, none] } },
    'GET /api/environments': { body: { environments: [environment] } },
    'GET /api/environments/env_1/revisions': { body: { revisions: [revision()] } },
    'POST /api/sessions': { body: agentSession({ id: 'ses_new' }) },
  });
}

function renderStart(client: ReturnType<typeof api>) {
  return renderWithApi(
    <Routes>
      <Route path="/" element={<StartSession />} />
      <Route path="/sessions/:id" element={<p>session page</p>} />
    </Routes>,
    client.client,
  );
}

const started = (calls: ReturnType<typeof api>['calls']) => calls.find((c) => c.method === 'POST' && c.path === '/api/sessions');

describe('Start session', () => {
  it('a fixed agent shows its sandbox read-only and starts without sandbox input', async () => {
    const client = api();
    renderStart(client);
    const shown = await screen.findByTestId('fixed-sandbox');
    expect(within(shown).getByText('main')).toBeTruthy();
    await waitFor(() => expect(within(shown).getByText('build')).toBeTruthy());
    expect(within(shown).getByText('#1')).toBeTruthy();
    expect(within(shown).queryByRole('radio')).toBeNull();
    expect(within(shown).queryByRole('combobox')).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Start session' }));
    expect(await screen.findByText('session page')).toBeTruthy();
    expect(started(client.calls)?.body).toEqual({ agentId: 'agt_fixed' });
  });

  it('a selectable agent offers its bindings, the default chosen, and sends the pick', async () => {
    const client = api();
    renderStart(client);
    fireEvent.change(await screen.findByLabelText('Agent'), { target: { value: 'agt_pick' } });
    expect(screen.queryByTestId('fixed-sandbox')).toBeNull();
    const group = screen.getByRole('group', { name: 'Sandbox' });
    const radios = within(group).getAllByRole('radio') as HTMLInputElement[];
    expect(radios.map((r) => r.value)).toEqual(['small', 'big']);
    expect(radios.find((r) => r.checked)?.value).toBe('small');
    expect(group.textContent).toContain('(default)');
    await userEvent.click(within(group).getByRole('radio', { name: /big/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Start session' }));
    await waitFor(() => expect(started(client.calls)).toBeTruthy());
    expect(started(client.calls)?.body).toEqual({ agentId: 'agt_pick', sandbox: { use: 'big' } });
  });

  it('an agent without a sandbox says so', async () => {
    const client = api();
    renderStart(client);
    fireEvent.change(await screen.findByLabelText('Agent'), { target: { value: 'agt_none' } });
    expect(screen.getByTestId('no-sandbox').textContent).toContain('no sandbox');
    await userEvent.click(screen.getByRole('button', { name: 'Start session' }));
    await waitFor(() => expect(started(client.calls)?.body).toEqual({ agentId: 'agt_none' }));
  });

  it("the server's refusal is shown in words", async () => {
    const client = fakeClient({
      'GET /api/agents': { body: { agents: [fixed] } },
      'GET /api/environments': { body: { environments: [] } },
      'POST /api/sessions': {
        status: 422,
        body: {
          error: { code: 'unprocessable', message: 'this agent is archived; it starts no new sessions', details: { reason: 'archived' } },
        },
      },
    });
    renderWithApi(<StartSession />, client.client);
    await userEvent.click(await screen.findByRole('button', { name: 'Start session' }));
    expect((await screen.findByRole('alert')).textContent).toContain('this agent is archived');
  });

  it('with no agents, says so and links to Create agent', async () => {
    renderWithApi(
      <StartSession />,
      fakeClient({ 'GET /api/agents': { body: { agents: [] } }, 'GET /api/environments': { body: { environments: [] } } }).client,
    );
    expect((await screen.findByRole('link', { name: 'Create agent' })).getAttribute('href')).toBe('/agents/new');
  });
});
