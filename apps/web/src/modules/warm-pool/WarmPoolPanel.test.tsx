import type { WarmPoolState } from '@sandcast/contracts';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeClient, renderWithApi } from '../../test/fake-api.tsx';
import { WarmPoolPanel } from './WarmPoolPanel.tsx';

const pool = (overrides: Partial<WarmPoolState> = {}): WarmPoolState => ({
  size: 3,
  maxAgeSeconds: 3600,
  ready: 3,
  booting: 0,
  lastRefillError: null,
  lastRefillAt: '2026-01-01T00:00:00.000Z',
  ...overrides,
});

const render = (answer: { status?: number; body: unknown }) => {
  const api = fakeClient({ 'GET /api/environments/env_1/warm-pool': answer });
  renderWithApi(<WarmPoolPanel environmentId="env_1" />, api.client);
  return api;
};

describe('Warm pool panel', () => {
  it('a full pool shows its size, ready and booting members', async () => {
    render({ body: pool() });
    expect(await screen.findByText('Full')).toBeTruthy();
    expect(screen.getByTestId('pool-size').textContent).toBe('3');
    expect(screen.getByTestId('pool-ready').textContent).toBe('3');
    expect(screen.getByTestId('pool-booting').textContent).toBe('0');
    expect(screen.queryByTestId('pool-error')).toBeNull();
  });

  it('a filling pool says so', async () => {
    render({ body: pool({ ready: 1, booting: 2 }) });
    expect(await screen.findByText('Filling…')).toBeTruthy();
    expect(screen.getByTestId('pool-booting').textContent).toBe('2');
  });

  it('a pool left short shows the last refill error in words', async () => {
    render({ body: pool({ ready: 2, lastRefillError: 'the pool is 2 of 3: this server allows 6 sandboxes at once' }) });
    expect(await screen.findByText('Short')).toBeTruthy();
    expect((await screen.findByRole('alert')).textContent).toMatch(/stopped short: the pool is 2 of 3: this server allows 6 sandboxes/);
  });

  it('no pool says what to do to have one', async () => {
    render({ body: pool({ size: 0, ready: 0, lastRefillAt: null }) });
    expect(await screen.findByText(/No warm pool/)).toBeTruthy();
    expect(screen.queryByTestId('pool-size')).toBeNull();
  });

  it('an API error shows its message and a retry', async () => {
    const api = render({ status: 404, body: { error: { code: 'not_found', message: 'no environment with id env_1' } } });
    expect(await screen.findByText(/no environment with id env_1/)).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: /retry/i }));
    expect(api.calls.filter((c) => c.path === '/api/environments/env_1/warm-pool').length).toBeGreaterThanOrEqual(2);
  });
});
