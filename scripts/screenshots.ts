/**
 * Regenerates docs/screenshots/*.png: the main screens of the web UI, driven in Debian's Chromium
 * against a real server (embedded database, fake provider) exactly as the end-to-end suite does.
 *
 *   npm run screenshots        (or: npx tsx scripts/screenshots.ts)
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../tests/e2e/support/browser.ts';
import { see, seeSetupStatus } from '../tests/e2e/support/page-helpers.ts';
import { startE2eServer } from '../tests/e2e/support/server.ts';

const OUT = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));

async function shot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  // Let toasts and transitions settle; hide the blinking cursor's timing from the picture.
  await page.waitForTimeout(400);
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: options.fullPage ?? false });
  console.log(`screenshots: ${name}.png`);
}

async function main(): Promise<void> {
  await mkdir(OUT, { recursive: true });
  const server = await startE2eServer();
  const browser = await launchBrowser({ width: 1280, height: 800 });
  const { page } = browser;
  try {
    await server.client.settings.update({ experimental: { enableEnvironments: true } });
    await page.goto(`${server.url}/settings`);
    await see(page.getByRole('switch', { name: 'Enable Environments' }));
    await shot(page, 'settings');

    await page.goto(`${server.url}/environments/new`);
    await page.getByLabel('Name', { exact: true }).fill('build');
    await page.getByRole('radio', { name: /Fake \(tests\)/ }).check();
    await shot(page, 'environment-create', { fullPage: true });

    const env = await server.client.environments.create({ name: 'build', provider: 'fake', config: { image: 'fake-base', cpu: 2 } });
    await server.client.environments.create({ name: 'ci-runner', provider: 'fake', config: {} });
    await page.goto(`${server.url}/environments`);
    await see(page.getByRole('link', { name: 'build' }));
    await shot(page, 'environments');

    await page.goto(`${server.url}/environments/${env.id}#custom-image`);
    const panel = page.locator('#custom-image');
    await panel.getByRole('button', { name: 'Configure image', exact: true }).click();
    await seeSetupStatus(page, 'Setup running');
    await see(page.getByTestId('terminal-state').filter({ hasText: /^Connected$/ }));
    await page.locator('.xterm').click();
    await page.keyboard.type(
      'cd "$SANDCAST_SANDBOX_ROOT/workspace" && mkdir -p .config/tool && echo "logged in" > .config/tool/session && ls -la .config/tool\n',
    );
    await page.waitForTimeout(800);
    await panel.getByRole('button', { name: 'Refresh list' }).click();
    await see(page.getByTestId('capture-review').getByText(/session$/));
    // Tall enough to show the status line, the terminal, the review and Finished together.
    await page.setViewportSize({ width: 1280, height: 1080 });
    await page.evaluate(() => document.getElementById('custom-image')?.scrollIntoView());
    await shot(page, 'custom-image-setup');
    await page.setViewportSize({ width: 1280, height: 800 });

    await panel.getByRole('button', { name: 'Finished', exact: true }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Capture image' }).click();
    await see(page.getByTestId('active-template'), 60_000);
    // A second capture, so the history shows a superseded image and Rollback has somewhere to go.
    const second = await server.client.customImages.startSetup(env.id);
    await server.client.customImages.exec(second.session.id, { command: ['sh', '-c', 'echo v2 > tool-version'] });
    await server.client.customImages.finish(second.session.id);
    await page.reload();
    await see(page.getByTestId('active-template'));
    await page.evaluate(() => document.getElementById('custom-image')?.scrollIntoView());
    await shot(page, 'custom-image-active');

    const sandbox = await server.client.sandboxes.create({ environmentId: env.id });
    await page.goto(`${server.url}/sandboxes`);
    const card = await see(page.getByTestId('sandbox-card'));
    await card.getByLabel(/Command to run/).fill('cat tool-version && ls -a');
    await card.getByRole('button', { name: 'Run', exact: true }).click();
    await see(card.getByTestId('exec-output'));
    await shot(page, 'sandboxes');
    await server.client.sandboxes.delete(sandbox.id);

    await page.setViewportSize({ width: 420, height: 860 });
    await page.goto(`${server.url}/environments/${env.id}`);
    await see(page.getByTestId('active-template'));
    await shot(page, 'environment-narrow');
  } finally {
    await browser.close();
    await server.close();
  }

  const authed = await startE2eServer({ mode: 'authenticated' });
  const login = await launchBrowser({ width: 1280, height: 800 });
  try {
    await login.page.goto(`${authed.url}/`);
    await see(login.page.getByRole('heading', { name: 'Log in to Sandcast' }));
    const key = (await readFile(path.join(authed.dataDir, 'admin-api-key'), 'utf8')).trim();
    await login.page.getByLabel('API key').fill(key);
    await shot(login.page, 'login');
  } finally {
    await login.close();
    await authed.close();
  }
}

await main();
