import type { SandboxBody } from '@sandcast/contracts';
import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fakeClient, renderWithApi } from '../../test/fake-api.tsx';
import { SandboxCard } from './SandboxCard.tsx';

const sandbox = {
  id: 'sbx_0123456789abcdef',
  environmentId: 'env_1',
  status: 'running',
  imageId: 'tpl_2',
  failureReason: null,
  createdAt: new Date(Date.now() - 120_000).toISOString(),
} as unknown as SandboxBody;

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
  });
});
