import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { interruptLatch, waitForOperator } from './wait-for-operator.ts';

const never = new Promise<void>(() => undefined);
const stillWaiting = async () => 'waiting_for_user';

describe('waitForOperator', () => {
  it('finishes on a line (Enter)', async () => {
    const input = new PassThrough();
    const decision = waitForOperator({ input, interrupted: never, poll: stillWaiting });
    input.write('\n');
    expect(await decision).toEqual({ kind: 'finish' });
  });

  it('cancels at the end of input', async () => {
    const input = new PassThrough();
    const decision = waitForOperator({ input, interrupted: never, poll: stillWaiting });
    input.end();
    expect(await decision).toEqual({ kind: 'cancel', why: 'end_of_input' });
  });

  it('cancels on Ctrl-C, and the latch keeps SIGINT from killing the process only while it is held', async () => {
    const signals = new EventEmitter();
    const latch = interruptLatch(signals);
    const decision = waitForOperator({ input: new PassThrough(), interrupted: latch.interrupted, poll: stillWaiting });
    signals.emit('SIGINT');
    expect(await decision).toEqual({ kind: 'cancel', why: 'interrupt' });
    latch.dispose();
    expect(signals.listenerCount('SIGINT')).toBe(0);
  });

  it('stops waiting when the session leaves the waiting state on its own (expired, finished elsewhere)', async () => {
    const statuses = ['waiting_for_user', undefined, 'timed_out'];
    const decision = waitForOperator({ input: new PassThrough(), interrupted: never, poll: async () => statuses.shift(), pollMs: 5 });
    expect(await decision).toEqual({ kind: 'ended', status: 'timed_out' });
  });
});
