import { API_PATHS } from '@sandcast/contracts';
import { fakeDaytonaSkipReason, startFakeDaytona } from '@sandcast/provider-daytona/testing';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { fakeClusterSkipReason, startFakeKubernetes } from '@sandcast/provider-kubernetes/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, chromiumSkipReason, launchBrowser } from './support/browser.ts';
import { see, seeSetupStatus, seeToast } from './support/page-helpers.ts';
import { type E2eServer, startE2eServer } from './support/server.ts';

const chromiumSkip = chromiumSkipReason();
if (chromiumSkip) console.warn(`[e2e] skipped: ${chromiumSkip}`);

/** A provider account the flow reaches through a connection: here, one of the providers' fakes. */
interface FakeAccount {
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  close(): Promise<void>;
}

/**
 * The providers the flow runs on: the fake always (fast), Docker where an engine runs, the local
 * provider whenever the server registers it and it is available here, and Daytona and Kubernetes
 * against their fakes, each through a connection chosen on the create form.
 */
interface ProviderCase {
  provider: string;
  /** Fills the provider's required fields on the create form (its connection, its config). */
  fill: (page: Page) => Promise<void>;
  /** For a connected provider: starts its fake; the connection to it is made before the flow. */
  account?: () => Promise<FakeAccount>;
}

const dockerSkip = await dockerSkipReason();
if (dockerSkip && process.env.CI === 'true') throw new Error(`CI=true but the Docker end-to-end run cannot happen: ${dockerSkip}`);
const daytonaSkip = await fakeDaytonaSkipReason();
const kubernetesSkip = await fakeClusterSkipReason();
for (const [name, reason] of [
  ['Daytona', daytonaSkip],
  ['Kubernetes', kubernetesSkip],
] as const) {
  if (reason && process.env.CI === 'true') throw new Error(`CI=true but the ${name} end-to-end run cannot happen: ${reason}`);
}

/** The name of the connection a connected case creates, and picks on the create form. */
const CONNECTION = 'e2e-account';
async function pickConnection(page: Page): Promise<void> {
  await page.getByLabel('Connection', { exact: true }).selectOption({ label: CONNECTION });
}

const CASES: ProviderCase[] = [
  { provider: 'fake', fill: async () => {} },
  ...(dockerSkip
    ? []
    : [
        {
          provider: 'docker',
          fill: async (page: Page) => page.getByLabel(/^Image/).fill(TEST_IMAGE),
        },
      ]),
  { provider: 'local', fill: async () => {} },
  ...(daytonaSkip
    ? []
    : [
        {
          provider: 'daytona',
          fill: pickConnection,
          account: async () => {
            const fake = await startFakeDaytona();
            return { config: { apiUrl: fake.apiUrl }, secrets: { apiKey: fake.apiKey }, close: () => fake.close() };
          },
        },
      ]),
  ...(kubernetesSkip
    ? []
    : [
        {
          provider: 'kubernetes',
          fill: async (page: Page) => {
            await pickConnection(page);
            await page.getByLabel(/^Image/).fill(TEST_IMAGE);
          },
          account: async () => {
            const fake = await startFakeKubernetes();
            return {
              config: {
                namespace: fake.namespace,
                captureRegistry: 'registry.sandcast.test/e2e',
                committerImage: 'sandcast/committer:test',
              },
              secrets: { kubeconfig: fake.kubeconfig },
              close: () => fake.close(),
            };
          },
        },
      ]),
];

/**
 * The sandbox's /workspace. The fake provider runs its shells on this host with the sandbox root
 * in SANDCAST_SANDBOX_ROOT; real sandboxes have no such variable and a real /workspace.
 */
const WORKSPACE = '"$SANDCAST_SANDBOX_ROOT/workspace"';

/**
 * Writes /workspace/<name> in the setup sandbox by typing into the browser terminal, as an
 * operator would. There is no other way in: a server without the terminal fails the flow.
 */
async function writeInSetup(page: Page, name: string, content: string): Promise<void> {
  const script = `mkdir -p ${WORKSPACE} && echo ${content} > ${WORKSPACE}/${name} && echo wrote-$((6*7))`;
  await see(page.getByTestId('terminal-state').filter({ hasText: /^Connected$/ }), 30_000);
  await page.locator('.xterm').click();
  await page.keyboard.type(`${script}\n`);
  // The shell computes 42, so this is the command's output, not the echo of what was typed.
  await see(page.locator('.xterm-rows').filter({ hasText: 'wrote-42' }), 30_000);
}

/** Asks for the list of changes until the path shows up (a provider may report a write a moment late). */
async function seeInCaptureReview(page: Page, path: RegExp): Promise<void> {
  const review = page.getByTestId('capture-review');
  const deadline = Date.now() + 60_000;
  for (;;) {
    await review.getByRole('button', { name: 'Refresh list' }).click();
    try {
      await see(review.getByText(path), 5_000);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}

for (const c of CASES) {
  describe.skipIf(chromiumSkip !== null)(`custom image flow in Chromium on ${c.provider}`, () => {
    let server: E2eServer;
    let browser: Browser;
    let page: Page;
    let environmentId = '';
    let available = false;
    let unavailable = '';
    let displayName = '';
    /** Whether the provider lists what a setup changed; without it the capture review has nothing to show. */
    let changeTracking = false;
    let account: FakeAccount | undefined;

    beforeAll(async () => {
      server = await startE2eServer();
      const target = (await server.client.targets()).find((t) => t.provider === c.provider);
      // A connected provider is unavailable until it has a connection; the flow makes one first.
      available = c.account && target ? true : target?.available === true;
      displayName = target?.displayName ?? c.provider;
      changeTracking = target?.capabilities.changeTracking === true;
      if (!available) {
        const reason = target ? target.unavailableReason : 'the server does not register it';
        if (process.env.CI === 'true') throw new Error(`CI=true but ${c.provider} is unavailable: ${reason}`);
        unavailable = `${c.provider} is unavailable here: ${reason}`;
        console.warn(`[e2e] ${c.provider}: skipped, ${reason}`);
        return;
      }
      if (c.account) account = await c.account();
      browser = await launchBrowser();
      page = browser.page;
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await account?.close();
    });

    it('enable environments → create environment → Configure image → write a file → review → Finished', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.goto(`${server.url}/environments`);
      await see(page.getByTestId('environments-off-hint'));
      await page.getByRole('link', { name: 'Settings → Instance settings → Experimental' }).click();
      const toggle = page.getByRole('switch', { name: 'Enable Environments' });
      await toggle.click();
      await see(page.locator('[role="switch"][aria-checked="true"]'));
      if (account) {
        await server.client.connections.create({
          name: CONNECTION,
          provider: c.provider,
          config: account.config,
          secrets: account.secrets,
        });
        const target = (await server.client.targets()).find((t) => t.provider === c.provider);
        expect(target?.available, target?.unavailableReason ?? '').toBe(true);
        // The page read the providers before the connection existed.
        await page.reload();
      }

      await page.getByRole('link', { name: 'Environments' }).click();
      await see(page.getByText('No environments yet'));
      await page.getByRole('link', { name: 'Create environment' }).click();
      await page.getByLabel('Name', { exact: true }).fill(`e2e-${c.provider}`);
      await page.getByRole('radio', { name: new RegExp(displayName.replace(/[()]/g, '\\$&')) }).check();
      await c.fill(page);
      await page.getByRole('button', { name: 'Create environment', exact: true }).click();
      await see(page.getByRole('heading', { name: `e2e-${c.provider}` }));
      environmentId = new URL(page.url()).pathname.split('/').pop()!;

      const panel = page.locator('#custom-image');
      await see(panel.getByText('Not configured'));
      await see(panel.getByText(`Capture a custom ${displayName} image with your tools already logged in.`));
      await panel.getByRole('button', { name: 'Configure image', exact: true }).click();
      await seeSetupStatus(page, 'Setup running', 120_000);

      await writeInSetup(page, 'e2e-first.txt', 'first');
      // Nobody clicks Refresh list: the review refreshes once the terminal's output goes quiet.
      if (changeTracking) await see(page.getByTestId('capture-review').getByText(/\/workspace\/e2e-first\.txt$/), 30_000);

      await panel.getByRole('button', { name: 'Finished', exact: true }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Capture image', exact: true }).click();
      await seeToast(page, 'Template captured', 'Future runs can use the promoted template.');
      await see(page.getByTestId('active-template'), 60_000);
      await see(panel.getByTestId('setup-status').filter({ hasText: 'Template captured' }));
    });

    it('a sandbox created now boots from the image and sees the file', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.getByRole('link', { name: 'Sandboxes' }).click();
      await page.getByRole('button', { name: 'Create sandbox', exact: true }).click();
      await seeToast(page, 'Sandbox created', 'It booted from the active custom image.');
      const card = await see(page.getByTestId('sandbox-card'), 60_000);
      await see(card.getByTestId('sandbox-image').filter({ hasText: 'custom image' }));
      await card.getByLabel(/Command to run/).fill(`cat ${WORKSPACE}/e2e-first.txt`);
      await card.getByRole('button', { name: 'Run', exact: true }).click();
      await see(card.getByTestId('exec-output').filter({ hasText: 'first' }), 60_000);
      await card.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Delete sandbox', exact: true }).click();
      await seeToast(page, 'Sandbox deleted.');
    });

    it('Refresh and capture again, then Rollback, then Disable — each with its toast', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.goto(`${server.url}/environments/${environmentId}`);
      const panel = page.locator('#custom-image');
      await panel.getByRole('button', { name: 'Refresh', exact: true }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Start setup', exact: true }).click();
      await seeSetupStatus(page, 'Setup running', 120_000);
      await writeInSetup(page, 'e2e-second.txt', 'second');
      if (changeTracking) await seeInCaptureReview(page, /\/workspace\/e2e-second\.txt$/);
      await panel.getByRole('button', { name: 'Finished', exact: true }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Capture image', exact: true }).click();
      await seeToast(page, 'Template captured', 'Future runs can use the promoted template.');
      await see(panel.getByRole('table', { name: 'Image history' }).getByText('superseded'), 60_000);

      await panel.getByRole('button', { name: 'Rollback', exact: true }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Rollback', exact: true }).click();
      await seeToast(page, 'Future runs will use the previous template.');

      await panel.getByRole('button', { name: 'Disable', exact: true }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Disable', exact: true }).click();
      await seeToast(page, 'Future runs will use the base provider configuration.');
      await see(panel.getByText('Not configured'));
      await see(panel.getByRole('table', { name: 'Image history' }).getByText('revoked'));
      // The last capture's "Template captured" line went with the image.
      expect(await panel.getByTestId('setup-status').count()).toBe(0);

      const templates = await server.client.customImages.history(environmentId);
      expect(templates.map((t) => t.status).sort()).toEqual(['revoked', 'superseded']);
      expect(server.server.routes.some((r) => r.url === API_PATHS.sandboxes)).toBe(true);
    });
  });
}
