import { describe, expect, it } from 'vitest';
import { formatBytes } from './format.ts';

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [4, '4 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [1536, '1.5 KiB'],
    [10_188, '9.9 KiB'],
    [10_189, '10 KiB'], // 9.950… KiB: one decimal would read "10.0"
    [10 * 1024, '10 KiB'],
    [1024 * 1024 - 1, '1.0 MiB'], // 1023.999 KiB rounds to the next unit, never "1024 KiB"
    [5.25 * 1024 ** 3, '5.3 GiB'],
    [300 * 1024 ** 4, '300 TiB'],
    [2048 * 1024 ** 5, '2048 PiB'],
  ])('%d bytes → %s', (bytes, shown) => {
    expect(formatBytes(bytes)).toBe(shown);
  });

  it('shows the given placeholder for a size that is not known', () => {
    expect([formatBytes(null), formatBytes(undefined, '—'), formatBytes(-1), formatBytes(Number.NaN)]).toEqual(['-', '—', '-', '-']);
  });
});
