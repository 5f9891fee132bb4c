import { describe, expect, it } from 'vitest';
import { LoginThrottle, sourceOf } from './login-throttle.ts';

const frozenClock = () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
};

describe('login back-off per source', () => {
  it('lets the first failures through, then refuses for a delay that doubles up to the ceiling', () => {
    const clock = frozenClock();
    const throttle = new LoginThrottle({ freeFailures: 3, baseDelayMs: 1000, maxDelayMs: 8000, clock });
    for (let i = 0; i < 3; i++) {
      expect(throttle.check('10.0.0.1')).toEqual({ allowed: true });
      expect(throttle.failed('10.0.0.1').blockedUntil).toBe(0);
    }
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      expect(throttle.check('10.0.0.1').allowed).toBe(true);
      const state = throttle.failed('10.0.0.1');
      delays.push(state.blockedUntil - clock.now().getTime());
      const verdict = throttle.check('10.0.0.1');
      expect(verdict).toEqual({ allowed: false, retryAfterMs: delays.at(-1), failures: 4 + i });
      clock.advance(delays.at(-1)! - 1);
      expect(throttle.check('10.0.0.1').allowed).toBe(false);
      clock.advance(1);
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('keeps sources apart, forgets a source on success or after a quiet period', () => {
    const clock = frozenClock();
    const throttle = new LoginThrottle({ freeFailures: 0, baseDelayMs: 1000, forgetAfterMs: 60_000, clock });
    throttle.failed('10.0.0.1');
    expect(throttle.check('10.0.0.1').allowed).toBe(false);
    expect(throttle.check('10.0.0.2')).toEqual({ allowed: true });
    throttle.succeeded('10.0.0.1');
    expect(throttle.check('10.0.0.1')).toEqual({ allowed: true });
    throttle.failed('10.0.0.3');
    clock.advance(60_001);
    expect(throttle.state('10.0.0.3')).toBeUndefined();
    expect(throttle.failed('10.0.0.3').failures).toBe(1);
  });

  it('holds at most maxSources, dropping the stalest', () => {
    const clock = frozenClock();
    const throttle = new LoginThrottle({ maxSources: 100, clock });
    for (let i = 0; i < 10_000; i++) throttle.failed(`10.0.${i >> 8}.${i & 255}`);
    expect(throttle.size()).toBe(100);
    expect(throttle.state('10.0.0.0')).toBeUndefined();
    expect(throttle.state(`10.0.${9999 >> 8}.${9999 & 255}`)?.failures).toBe(1);
  });

  it('counts IPv4-mapped addresses as IPv4 and IPv6 by /64', () => {
    expect(sourceOf('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(sourceOf('127.0.0.2')).toBe('127.0.0.2');
    expect(sourceOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(sourceOf('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(sourceOf('::1')).toBe('0:0:0:0::/64');
    expect(sourceOf(undefined)).toBe('unknown');
  });
});
