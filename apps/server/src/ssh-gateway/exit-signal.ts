import { constants } from 'node:os';

/** The signal names SSH's exit-signal carries (RFC 4254 §6.10); ssh2 refuses any other. */
const SSH_SIGNAL_NAMES = new Set(['ABRT', 'ALRM', 'FPE', 'HUP', 'ILL', 'INT', 'QUIT', 'SEGV', 'TERM', 'USR1', 'USR2', 'KILL', 'PIPE']);

const signals = constants.signals as Record<string, number>;

/** `9`, `'9'`, `'SIGKILL'` or `'KILL'` → `{ name: 'KILL', number: 9 }`; null for anything else. */
export function parseSignal(signal: string | number): { name: string; number: number } | null {
  const text = String(signal).trim();
  if (/^\d+$/.test(text)) {
    const number = Number(text);
    const full = Object.keys(signals).find((key) => signals[key] === number);
    return full && number > 0 ? { name: full.replace(/^SIG/, ''), number } : null;
  }
  const name = text.toUpperCase().replace(/^SIG/, '');
  const number = Object.hasOwn(signals, `SIG${name}`) ? signals[`SIG${name}`] : undefined;
  return number ? { name, number } : null;
}

/**
 * What to tell an SSH client about a PTY's end. Providers report a signal as node-pty does (a
 * number, as text) or by name; SSH wants a name from its short list. A signal outside that list
 * is reported as the shell does, exit status 128 + n. With neither a status nor a signal nothing
 * is reported, and the client knows the outcome is unknown (OpenSSH exits 255).
 */
export function sshExitOf(exit: { exitCode: number | null; signal?: string | undefined }): { signal: string } | { status: number } | null {
  if (exit.signal && exit.signal !== '0') {
    const parsed = parseSignal(exit.signal);
    if (parsed && SSH_SIGNAL_NAMES.has(parsed.name)) return { signal: parsed.name };
    if (parsed) return { status: 128 + parsed.number };
  }
  if (exit.exitCode === null) return null;
  return { status: exit.exitCode };
}
