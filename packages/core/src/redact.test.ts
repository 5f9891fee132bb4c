import { describe, expect, it } from 'vitest';
import { REDACTED, redact } from './redact.ts';

describe('redact', () => {
  it('hides values under secret-looking keys at any depth', () => {
    expect(
      redact({ name: 'x', apiKey: 'k', nested: { password: 'p', Authorization: 'Bearer abc', list: [{ token: 't', keep: 1 }] } }),
    ).toEqual({
      name: 'x',
      apiKey: REDACTED,
      nested: { password: REDACTED, Authorization: REDACTED, list: [{ token: REDACTED, keep: 1 }] },
    });
  });

  it('hides values at the given secret paths whatever their key', () => {
    expect(redact({ config: { region: 'eu', dsn: 'postgres://u:p@h/db' } }, ['config.dsn'])).toEqual({
      config: { region: 'eu', dsn: REDACTED },
    });
  });

  it('hides strings that look like bearer credentials or Sandcast keys', () => {
    expect(redact({ note: 'Bearer abcdefghijklmnopqrstuvwxyz', other: 'sc_abcdefghijklmnopqrstuvwxyz012345' })).toEqual({
      note: REDACTED,
      other: REDACTED,
    });
  });

  it('does not modify its input', () => {
    const input = { secret: 's' };
    redact(input);
    expect(input).toEqual({ secret: 's' });
  });
});
