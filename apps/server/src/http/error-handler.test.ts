import { ProviderError } from '@sandcast/provider-sdk';
import { describe, expect, it } from 'vitest';
import { toErrorResponse } from './error-handler.ts';

describe('toErrorResponse: E2BIG', () => {
  it('a spawn that meets "argument list too long" is the caller\'s 400, not a 500', () => {
    const spawnError = Object.assign(new Error('spawn E2BIG'), { code: 'E2BIG', errno: -7, syscall: 'spawn' });
    const answer = toErrorResponse(spawnError);
    expect(answer.status).toBe(400);
    expect(answer.internal).toBe(false);
    expect(answer.body.error.message).toMatch(/too large for a process \(E2BIG\); pass big data as a file or on stdin/);
  });

  it('also when a provider wrapped it as a backend error', () => {
    const wrapped = new ProviderError({
      provider: 'local',
      code: 'backend',
      message: 'exec failed',
      cause: Object.assign(new Error('spawn E2BIG'), { code: 'E2BIG' }),
    });
    expect(toErrorResponse(wrapped).status).toBe(400);
    expect(toErrorResponse(new ProviderError({ provider: 'docker', code: 'backend', message: 'exec: E2BIG from runc' })).status).toBe(400);
  });

  it('other unknown errors stay an internal 500', () => {
    expect(toErrorResponse(new Error('boom')).status).toBe(500);
  });
});
