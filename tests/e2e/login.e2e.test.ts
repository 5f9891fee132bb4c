import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, chromiumSkipReason, launchBrowser } from './support/browser.ts';
import { see } from './support/page-helpers.ts';
import { type E2eServer, startE2eServer } from './support/server.ts';

const chromiumSkip = chromiumSkipReason();

describe.skipIf(chromiumSkip !== null)('login in authenticated mode, in Chromium', () => {
  let server: E2eServer;
  let browser: Browser;
  let page: Page;
  let adminKey: string;

  beforeAll(async () => {
    server = await startE2eServer({ mode: 'authenticated' });
    adminKey = (await readFile(path.join(server.dataDir, 'admin-api-key'), 'utf8')).trim();
    browser = await launchBrowser();
    page = browser.page;
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('sends an anonymous visitor to the login page; a wrong key is refused in words', async () => {
    await page.goto(`${server.url}/settings`);
    await see(page.getByRole('heading', { name: 'Log in to Sandcast' }));
    await page.getByLabel('API key').fill('sc_wrong');
    await page.getByRole('button', { name: 'Log in' }).click();
    await see(page.getByRole('alert').filter({ hasText: 'unknown or revoked' }));
  });

  it('a good key logs in with an httpOnly cookie, keeps no key in browser storage, and logs out', async () => {
    await page.getByLabel('API key').fill(adminKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await see(page.getByTestId('instance-mode').filter({ hasText: 'Authenticated' }));
    const cookies = await browser.context.cookies(server.url);
    const session = cookies.find((c) => c.name === 'sandcast_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(session?.value).not.toContain(adminKey);
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
    expect(stored).not.toContain(adminKey);
    expect(stored).not.toContain(session!.value);

    // A write through the UI works with the cookie (and its CSRF header).
    await page.goto(`${server.url}/settings`);
    await page.getByRole('switch', { name: 'Enable Environments' }).click();
    await see(page.locator('[role="switch"][aria-checked="true"]'));

    await page.getByRole('button', { name: 'Log out' }).click();
    await see(page.getByRole('heading', { name: 'Log in to Sandcast' }));
    const after = await fetch(`${server.url}/api/instance/settings`, { headers: { cookie: `sandcast_session=${session!.value}` } });
    expect(after.status).toBe(401);
  });
});
