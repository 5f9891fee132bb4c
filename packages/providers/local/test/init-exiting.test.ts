import { describe, expect, it } from 'vitest';
import { looksLikeInitExiting } from '../src/instances.ts';
import { INIT_GONE } from '../src/runtime.ts';

describe('a command that failed because the init was exiting under it', () => {
  it('is recognised from what bwrap, nsenter and the wrapper print', () => {
    expect(looksLikeInitExiting("bwrap: Can't fork: Cannot allocate memory\n")).toBe(true);
    expect(looksLikeInitExiting('nsenter: cannot open /proc/4242/ns/uts: No such file or directory\n')).toBe(true);
    expect(looksLikeInitExiting(`${INIT_GONE}\n`)).toBe(true);
  });

  it('is not confused with the command failing on its own', () => {
    expect(looksLikeInitExiting('')).toBe(false);
    expect(looksLikeInitExiting('sh: 1: nope: not found\n')).toBe(false);
    expect(looksLikeInitExiting('cat: /proc/4242/ns/uts: No such file or directory\n')).toBe(false);
    expect(looksLikeInitExiting('nsenter: cannot open /proc/4242/ns/uts: Permission denied\n')).toBe(false);
  });
});
