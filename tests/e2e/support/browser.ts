import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium; SANDCAST_CHROMIUM points elsewhere. */
const CHROMIUM = process.env.SANDCAST_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or null. Under CI=true a reason is a failure, not a skip. */
export function chromiumSkipReason(): string | null {
  const reason = existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set SANDCAST_CHROMIUM)`;
  if (reason && process.env.CI === 'true') throw new Error(`CI=true but the end-to-end tests cannot run: ${reason}`);
  return reason;
}

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a throwaway profile. It may talk only to the loopback server under test:
 * every other request is aborted.
 */
export async function launchBrowser(options: { width?: number; height?: number } = {}): Promise<Browser> {
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  await context.route('**/*', (route) => {
    const host = new URL(route.request().url()).hostname;
    return host === '127.0.0.1' || host === 'localhost' ? route.continue() : route.abort();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
