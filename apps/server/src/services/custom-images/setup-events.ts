import { EventEmitter } from 'node:events';

/** Why a setup session's terminals are closed; the terminal sends it as `closed {reason}`. */
export type SetupEndReason = 'setup_finished' | 'setup_cancelled' | 'expired';

/** Announces the end of setup sessions to whoever holds connections into them (terminals, SSH). */
export class SetupEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  ended(sessionId: string, reason: SetupEndReason): void {
    this.emitter.emit('ended', sessionId, reason);
  }

  onEnded(listener: (sessionId: string, reason: SetupEndReason) => void): () => void {
    this.emitter.on('ended', listener);
    return () => this.emitter.off('ended', listener);
  }
}
