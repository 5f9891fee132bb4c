/** The time source for expiries. Services take one so tests can move time instead of waiting. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that runs with the system's but can be moved forward (tests of expiry). */
export interface MovableClock extends Clock {
  /** Moves the clock `ms` forward. */
  advance(ms: number): void;
  /** Puts the clock back on the system's time. */
  reset(): void;
}

export function createMovableClock(): MovableClock {
  let offsetMs = 0;
  return {
    now: () => new Date(Date.now() + offsetMs),
    advance: (ms) => {
      offsetMs += ms;
    },
    reset: () => {
      offsetMs = 0;
    },
  };
}
