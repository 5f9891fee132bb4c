import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { staticBinary } from '@sandcast/provider-sdk';
import { run } from './proc.ts';

const SOURCE = fileURLToPath(new URL('../native/sandcast-init.c', import.meta.url));
const BUILD_SCRIPT = fileURLToPath(new URL('../scripts/build-init.sh', import.meta.url));

/**
 * The sandbox's pid 1, built from native/sandcast-init.c by scripts/build-init.sh and cached by
 * the source's hash. Builds it when missing (gcc, a few hundred ms); the error says what to
 * install when it cannot.
 */
export async function ensureInitBinary(): Promise<{ path: string } | { error: string }> {
  const hash = createHash('sha256')
    .update(await readFile(SOURCE))
    .digest('hex')
    .slice(0, 16);
  const path = fileURLToPath(new URL(`../native/build/sandcast-init-${hash}`, import.meta.url));
  if (existsSync(path)) return { path };
  const built = await run('/bin/sh', [BUILD_SCRIPT]);
  if (built.code !== 0 || !existsSync(path)) {
    return { error: `the sandbox init could not be built: ${built.stderr.trim().split('\n').at(-1) ?? `exit ${built.code}`}` };
  }
  return { path };
}

const BOOT_SOURCE = fileURLToPath(new URL('../native/sandcast-boot.c', import.meta.url));
const AGENT_SOURCE = fileURLToPath(new URL('../native/sandcast-exec-agent.c', import.meta.url));

/** sandcast-boot (native/sandcast-boot.c, ADR 0034): the host side of a start; built on first use. */
export async function ensureBootBinary(): Promise<{ path: string } | { error: string }> {
  try {
    return { path: await staticBinary(BOOT_SOURCE) };
  } catch (error) {
    return {
      error: `the sandbox boot helper could not be built: ${error instanceof Error ? error.message.split('\n').at(-1) : String(error)}`,
    };
  }
}

let agentBuild: Promise<string | null> | null = null;

/** The exec agent (native/sandcast-exec-agent.c, ADR 0030), or null when it cannot be built (execs run the old way). */
export function agentBinary(): Promise<string | null> {
  agentBuild ??= staticBinary(AGENT_SOURCE).catch(() => {
    agentBuild = null;
    return null;
  });
  return agentBuild;
}
