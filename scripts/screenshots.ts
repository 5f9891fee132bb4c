/**
 * Regenerates docs/screenshots/*.png: the main screens of the web UI, driven in Debian's Chromium
 * against a real server (embedded database) on the `local` provider — real namespaces, a real
 * shell — exactly as the end-to-end suite starts it, minus the test-only fake provider. Needs
 * what the local provider needs (root or unprivileged user namespaces, bubblewrap).
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
/** The screens are taken as a newcomer sees them: the real providers only. */
const REAL_PROVIDERS_ONLY = { SANDCAST_ENABLE_FAKE_PROVIDER: '0' };

async function shot(page: Page, name: string, options: { fullPage?: boolean; settle?: boolean } = {}): Promise<void> {
  // Let toasts and transitions settle; hide the blinking cursor's timing from the picture.
  if (options.settle !== false) await page.waitForTimeout(400);
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: options.fullPage ?? false });
  console.log(`screenshots: ${name}.png`);
}

async function main(): Promise<void> {
  await mkdir(OUT, { recursive: true });
  const server = await startE2eServer({ env: REAL_PROVIDERS_ONLY });
  const local = (await server.client.targets()).find((t) => t.provider === 'local');
  if (!local?.available) throw new Error(`the local provider is unavailable here: ${local?.unavailableReason ?? 'not registered'}`);
  const browser = await launchBrowser({ width: 1280, height: 800 });
  const { page } = browser;
  try {
    await server.client.settings.update({ experimental: { enableEnvironments: true } });
    await page.goto(`${server.url}/settings`);
    await see(page.getByRole('switch', { name: 'Enable Environments' }));
    await shot(page, 'settings');

    await page.goto(`${server.url}/environments/new`);
    await page.getByLabel('Name', { exact: true }).fill('build');
    await page.getByRole('radio', { name: /Local \(namespaces\)/ }).check();
    await shot(page, 'environment-create', { fullPage: true });

    const env = await server.client.environments.create({ name: 'build', provider: 'local', config: { cpu: 2 } });
    // A second provider in the list where this machine has one (Docker with the suite's test image).
    const docker = (await server.client.targets()).find((t) => t.provider === 'docker' && t.available);
    await server.client.environments.create(
      docker
        ? { name: 'ci-runner', provider: 'docker', config: { image: 'sandcast-test/debian:bookworm' } }
        : { name: 'ci-runner', provider: 'local', config: { memoryMb: 2048 } },
    );
    await page.goto(`${server.url}/environments`);
    await see(page.getByRole('link', { name: 'build' }));
    await shot(page, 'environments');

    await page.goto(`${server.url}/environments/${env.id}#custom-image`);
    const panel = page.locator('#custom-image');
    await panel.getByRole('button', { name: 'Configure image', exact: true }).click();
    await seeSetupStatus(page, 'Setup running', 120_000);
    await see(page.getByTestId('terminal-state').filter({ hasText: /^Connected$/ }));
    await page.locator('.xterm').click();
    await page.keyboard.type('mkdir -p ~/.config/tool && echo "logged in" > ~/.config/tool/session && ls -la ~/.config/tool\n');
    // No Refresh list: the review refreshes itself once the terminal goes quiet.
    await see(page.getByTestId('capture-review').getByText(/session$/), 30_000);
    // Tall enough to show the status line, the terminal, the review and Finished together.
    await page.setViewportSize({ width: 1280, height: 1080 });
    await page.evaluate(() => document.getElementById('custom-image')?.scrollIntoView());
    await shot(page, 'custom-image-setup');

    await panel.getByRole('button', { name: 'Finished', exact: true }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Capture image' }).click();
    await see(page.getByTestId('capture-progress'));
    await shot(page, 'custom-image-capturing', { settle: false });
    await page.setViewportSize({ width: 1280, height: 800 });
    await see(page.getByTestId('active-template'), 120_000);
    // A second capture, so the history shows a superseded image and Rollback has somewhere to go.
    const second = await server.client.customImages.startSetup(env.id);
    await server.client.customImages.exec(second.session.id, { command: ['sh', '-c', 'echo v2 > /workspace/tool-version'] });
    await server.client.customImages.finish(second.session.id);
    await page.reload();
    await see(page.getByTestId('active-template'));
    await page.evaluate(() => document.getElementById('custom-image')?.scrollIntoView());
    await shot(page, 'custom-image-active');

    const sandbox = await server.client.sandboxes.create({ environmentId: env.id });
    await page.goto(`${server.url}/sandboxes`);
    const card = await see(page.getByTestId('sandbox-card'));
    await card.getByLabel(/Command to run/).fill('cat /workspace/tool-version && cat ~/.config/tool/session && uname -sr');
    await card.getByRole('button', { name: 'Run', exact: true }).click();
    await see(card.getByTestId('exec-output'), 60_000);
    await shot(page, 'sandboxes');
    await server.client.sandboxes.delete(sandbox.id);

    // Agents: one offering two bindings, one fixed to an older revision (its page shows the newer-revision hint).
    const firstRevision = env.currentRevision.id;
    const edited = await server.client.environments.update(env.id, { spec: { lifecycle: { idleAfterSeconds: 600 } } });
    const runner = (await server.client.environments.list()).find((e) => e.name === 'ci-runner')!;
    const coder = await server.client.agents.create({
      name: 'coder',
      displayName: 'Coding agent',
      sandboxPolicy: {
        mode: 'selectable',
        default: 'build',
        bindings: { build: { environmentRevisionId: edited.currentRevision.id }, ci: { environmentRevisionId: runner.currentRevision.id } },
      },
      capabilities: ['sandbox_fleet'],
    });
    const reviewer = await server.client.agents.create({
      name: 'reviewer',
      sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: firstRevision } } },
    });
    await page.goto(`${server.url}/agents`);
    await see(page.getByRole('link', { name: 'reviewer' }));
    await shot(page, 'agents');
    await page.goto(`${server.url}/agents/${reviewer.id}`);
    await see(page.getByText('A newer revision is available'));
    await shot(page, 'agent-policy');

    const agentSession = await server.client.sessions.start({ agentId: coder.id, sandbox: { use: 'build' } });
    await page.goto(`${server.url}/sessions`);
    await see(page.getByRole('table', { name: 'Sessions' }));
    await see(page.getByRole('group', { name: 'Sandbox' }));
    await shot(page, 'sessions');
    await page.goto(`${server.url}/sessions/${agentSession.id}`);
    await see(page.getByTestId('workspace-state').getByText('running', { exact: true }), 120_000);
    await shot(page, 'session-workspace');
    await server.client.sessions.end(agentSession.id);

    // A phone-sized window: the nav keeps its margin and the tables scroll inside their frame.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/environments`);
    await see(page.getByRole('link', { name: 'build' }));
    await shot(page, 'environments-narrow');
    await page.goto(`${server.url}/environments/${env.id}#custom-image`);
    await see(page.getByTestId('active-template'));
    await page.evaluate(() => document.getElementById('custom-image')?.scrollIntoView());
    await shot(page, 'environment-narrow');
  } finally {
    await browser.close();
    await server.close();
  }

  const authed = await startE2eServer({ mode: 'authenticated', env: REAL_PROVIDERS_ONLY });
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
