import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { SetupNetworkNote } from './SetupNetworkNote.tsx';

describe('the network note of image setup', () => {
  it('says that deny leaves nothing to install from, and is silent otherwise', () => {
    const { rerender } = render(<SetupNetworkNote containment={{ network: 'deny', hosts: [] }} />);
    expect(screen.getByTestId('setup-network-note').textContent).toMatch(/no route out.*allow.*allowlist/s);
    rerender(<SetupNetworkNote containment={{ network: 'allowlist', hosts: ['deb.debian.org'] }} />);
    expect(screen.queryByTestId('setup-network-note')).toBeNull();
    rerender(<SetupNetworkNote containment={{ network: 'allow', hosts: [] }} />);
    expect(screen.queryByTestId('setup-network-note')).toBeNull();
  });
});
