import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, chromiumSkipReason, launchBrowser } from './support/browser.ts';
import { see, seeToast } from './support/page-helpers.ts';
import { type E2eServer, startE2eServer } from './support/server.ts';

const chromiumSkip = chromiumSkipReason();

describe.skipIf(chromiumSkip !== null)('a sandbox stopped and started from its card, in Chromium on fake', () => {
  let server: E2eServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startE2eServer();
    await server.client.settings.update({ experimental: { enableEnvironments: true } });
    const env = await server.client.environments.create({ name: 'e2e-lifecycle', provider: 'fake', config: {} });
    await server.client.sandboxes.create({ environmentId: env.id });
    browser = await launchBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('Stop → stopped (Run disabled), Start → running again and a command runs', async () => {
    await page.goto(`${server.url}/sandboxes`);
    const card = await see(page.getByTestId('sandbox-card'));
    await see(card.getByText('Generation'));
    await card.getByRole('button', { name: 'Stop', exact: true }).click();
    await seeToast(page, 'Stopping the sandbox');
    await see(card.getByTestId('sandbox-state').filter({ hasText: /Desired\s*stopped.*observed\s*stopped/ }), 60_000);
    expect(await card.getByRole('button', { name: 'Run', exact: true }).isDisabled()).toBe(true);
    await card.getByRole('button', { name: 'Start', exact: true }).click();
    await see(card.getByTestId('sandbox-state').filter({ hasText: /Desired\s*ready.*observed\s*running/ }), 60_000);
    await card.getByLabel(/Command to run/).fill('echo back-$((6*7))');
    await card.getByRole('button', { name: 'Run', exact: true }).click();
    await see(card.getByTestId('exec-output').locator('pre').filter({ hasText: 'back-42' }), 60_000);
  });
});
