import { describe, expect, it } from 'vitest';
import { formatTime } from './format.ts';

describe('formatTime', () => {
  const now = Date.parse('2026-03-01T12:00:00.000Z');
  it.each([
    ['2026-03-01T11:59:50.400Z', '10 s ago (2026-03-01T11:59:50Z)'],
    ['2026-03-01T11:57:00.000Z', '3 min ago (2026-03-01T11:57:00Z)'],
    ['2026-03-01T13:00:00.000Z', 'in 1 h (2026-03-01T13:00:00Z)'],
    ['2026-02-26T12:00:00.000Z', '3 d ago (2026-02-26T12:00:00Z)'],
    ['2026-03-01T12:00:00.000Z', 'just now (2026-03-01T12:00:00Z)'],
  ])('%s reads as relative time plus the exact UTC second', (iso, expected) => {
    expect(formatTime(iso, '-', now)).toBe(expected);
  });
  it('says the fallback when there is no time', () => {
    expect(formatTime(null, 'never', now)).toBe('never');
  });
});
