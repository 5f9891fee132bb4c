import { describe, expect, it } from 'vitest';
import { parseSignal, sshExitOf } from './exit-signal.ts';

describe('exit reports for SSH clients', () => {
  it('names a numeric signal the way exit-signal wants (node-pty reports 9, ssh2 accepts only KILL)', () => {
    expect(sshExitOf({ exitCode: null, signal: '9' })).toEqual({ signal: 'KILL' });
    expect(sshExitOf({ exitCode: 0, signal: '15' })).toEqual({ signal: 'TERM' });
    expect(sshExitOf({ exitCode: null, signal: 'SIGHUP' })).toEqual({ signal: 'HUP' });
    expect(sshExitOf({ exitCode: null, signal: 'pipe' })).toEqual({ signal: 'PIPE' });
  });

  it('reports a signal SSH has no name for as the shell does, 128 + n', () => {
    expect(sshExitOf({ exitCode: null, signal: '26' })).toEqual({ status: 128 + 26 }); // SIGVTALRM
    expect(sshExitOf({ exitCode: null, signal: 'SIGBUS' })).toEqual({ status: 128 + 7 });
  });

  it('reports an exit status, and nothing when neither is known', () => {
    expect(sshExitOf({ exitCode: 3 })).toEqual({ status: 3 });
    expect(sshExitOf({ exitCode: 0, signal: '0' })).toEqual({ status: 0 });
    expect(sshExitOf({ exitCode: null })).toBeNull();
    expect(sshExitOf({ exitCode: null, signal: 'NOPE' })).toBeNull();
    expect(sshExitOf({ exitCode: 1, signal: '999' })).toEqual({ status: 1 });
  });

  it('parses numbers, names with and without SIG, and refuses the rest', () => {
    expect(parseSignal(9)).toEqual({ name: 'KILL', number: 9 });
    expect(parseSignal('SIGUSR1')).toEqual({ name: 'USR1', number: 10 });
    expect(parseSignal('0')).toBeNull();
    expect(parseSignal('')).toBeNull();
    expect(parseSignal('constructor')).toBeNull();
  });
});
