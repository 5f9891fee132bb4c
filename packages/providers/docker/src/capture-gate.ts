import { ProviderError } from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import { PROVIDER_ID } from './connection.ts';

/** How long the gate waits for an exec that is starting to be running before it lets a capture go on. */
const EXEC_START_SETTLE_MS = 15_000;

/**
 * Keeps a capture's pause from landing on an exec that is still starting (decision 0011). An exec
 * enters the gate before it is created and leaves once the engine reports its process running (or
 * ended); a capture waits until nothing is starting, then holds new execs off until it is done.
 */
export class CaptureGate {
  private readonly starting = new Map<string, number>();
  private readonly capturing = new Set<string>();
  private readonly waiters = new Map<string, Array<() => void>>();

  /** Registers an exec about to start on `containerId`. Refused while the container is being captured. */
  enter(containerId: string): { release(): void; releaseWhenStarted(exec: Docker.Exec): void } {
    if (this.capturing.has(containerId)) {
      throw new ProviderError({
        provider: PROVIDER_ID,
        code: 'in_use',
        message: 'the setup sandbox is being captured; run the command again once the capture is done',
      });
    }
    this.starting.set(containerId, (this.starting.get(containerId) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.starting.get(containerId) ?? 1) - 1;
      if (left > 0) {
        this.starting.set(containerId, left);
        return;
      }
      this.starting.delete(containerId);
      for (const wake of this.waiters.get(containerId) ?? []) wake();
      this.waiters.delete(containerId);
    };
    return {
      release,
      releaseWhenStarted(exec) {
        void (async () => {
          const until = Date.now() + EXEC_START_SETTLE_MS;
          try {
            while (Date.now() < until) {
              const info = await exec.inspect();
              if (info.Running || info.ExitCode !== null) return;
              await new Promise((resolve) => setTimeout(resolve, 5));
            }
          } catch {
            // The exec or its container is gone: nothing is starting any more.
          } finally {
            release();
          }
        })();
      },
    };
  }

  /** Whether this process is capturing `containerId` now. */
  isCapturing(containerId: string): boolean {
    return this.capturing.has(containerId);
  }

  /** Runs `fn` with no exec starting on `containerId` and none allowed to start. One capture at a time. */
  async capture<T>(containerId: string, fn: () => Promise<T>): Promise<T> {
    if (this.capturing.has(containerId)) {
      throw new ProviderError({ provider: PROVIDER_ID, code: 'in_use', message: 'this setup sandbox is already being captured' });
    }
    this.capturing.add(containerId);
    try {
      if (this.starting.has(containerId)) {
        await new Promise<void>((resolve) => {
          const list = this.waiters.get(containerId) ?? [];
          list.push(resolve);
          this.waiters.set(containerId, list);
        });
      }
      return await fn();
    } finally {
      this.capturing.delete(containerId);
    }
  }
}
