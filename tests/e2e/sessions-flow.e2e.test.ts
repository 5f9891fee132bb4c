import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, chromiumSkipReason, launchBrowser } from './support/browser.ts';
import { see, seeToast } from './support/page-helpers.ts';
import { type E2eServer, startE2eServer } from './support/server.ts';

const chromiumSkip = chromiumSkipReason();
if (chromiumSkip) console.warn(`[e2e] skipped: ${chromiumSkip}`);

/** The fake provider always; the local one wherever the server lists it available. */
const PROVIDERS = ['fake', 'local'] as const;

for (const provider of PROVIDERS) {
  describe.skipIf(chromiumSkip !== null)(`agents and sessions in Chromium on ${provider}`, () => {
    let server: E2eServer;
    let browser: Browser;
    let page: Page;
    let available = false;
    let unavailable = '';
    const environmentName = `e2e-sessions-${provider}`;
    let environmentId = '';

    beforeAll(async () => {
      server = await startE2eServer();
      const target = (await server.client.targets()).find((t) => t.provider === provider);
      available = target?.available === true;
      if (!available) {
        const reason = target ? target.unavailableReason : 'the server does not register it';
        if (process.env.CI === 'true') throw new Error(`CI=true but ${provider} is unavailable: ${reason}`);
        unavailable = `${provider} is unavailable here: ${reason}`;
        console.warn(`[e2e] ${provider}: skipped, ${reason}`);
        return;
      }
      // Environments themselves are driven through the UI by the custom image flow.
      await server.client.settings.update({ experimental: { enableEnvironments: true } });
      // Checkpointed, so the Workspace tab shows its checkpoint timeline.
      environmentId = (
        await server.client.environments.create({ name: environmentName, provider, config: {}, spec: { durability: 'checkpointed' } })
      ).id;
      browser = await launchBrowser();
      page = browser.page;
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    /** The session the flow started, by its page's URL. */
    const sessionId = () => new URL(page.url()).pathname.split('/').pop()!;

    it('edits the environment’s sandbox spec: a new revision that holds it', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.goto(`${server.url}/environments/${environmentId}`);
      const spec = page.getByRole('form', { name: 'Sandbox spec' });
      await spec.getByLabel('Idle after (seconds)').fill('600');
      await spec.getByRole('button', { name: 'Save spec' }).click();
      await seeToast(page, 'Saved as revision #2');
      // The list refreshes after the save: open revision #2 once it is there.
      const latest = page.locator('#revisions li').filter({ has: page.locator('summary', { hasText: '#2' }) });
      await see(latest.getByText('current'));
      await latest.locator('summary').click();
      await see(latest.getByTestId('revision-spec').filter({ hasText: '"idleAfterSeconds": 600' }));
    });

    it('creates a fixed agent pinned to the environment’s latest revision', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
      await see(page.getByText('No agents yet'));
      await page.getByRole('link', { name: 'Create agent' }).click();
      await page.getByLabel('Name', { exact: true }).fill('e2e-agent');
      await see(page.getByRole('radio', { name: /^Fixed/ }));
      expect(await page.getByRole('radio', { name: /^Fixed/ }).isChecked()).toBe(true);
      const binding = page.getByRole('group', { name: 'Binding default' });
      await expect.poll(() => binding.getByLabel('Environment').locator('option:checked').textContent()).toBe(environmentName);
      await expect.poll(() => binding.getByLabel('Revision').locator('option:checked').textContent()).toContain('#2 (latest)');
      await page.getByRole('button', { name: 'Create agent', exact: true }).click();
      await seeToast(page, 'Agent e2e-agent created');
      await see(page.getByRole('heading', { name: 'e2e-agent' }));
      await see(page.getByRole('region', { name: 'Version history' }).getByText('v1'));
    });

    it('starts a session: the fixed sandbox is shown read-only, then the Workspace tab shows it running', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sessions' }).click();
      await see(page.getByText('No sessions yet'));
      const fixed = page.getByTestId('fixed-sandbox');
      await see(fixed.getByText(environmentName));
      await see(fixed.getByText('#2'));
      await page.getByRole('button', { name: 'Start session', exact: true }).click();
      await see(page.getByRole('tab', { name: 'Workspace', selected: true }), 120_000);
      await see(page.getByTestId('workspace-sandbox-id'), 120_000);
      await see(page.getByTestId('workspace-state').getByText('running', { exact: true }), 120_000);
      await see(page.getByTestId('workspace-revision').getByRole('link', { name: '#2' }));
      await see(page.getByTestId('workspace-lifecycle').filter({ hasText: 'After 600 s idle' }));
      expect(await page.getByRole('button', { name: 'End session' }).isEnabled()).toBe(true);
    });

    it('runs a command in the session’s sandbox from the Terminal tab', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.getByRole('tab', { name: 'Terminal' }).click();
      await page.getByLabel(`Command to run in ${sessionId()}`).fill('echo session-$((6*7))');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      // The shell computes 42: this is the command's output, not the command line.
      const output = page.getByTestId('exec-output');
      await see(output.getByText('exit 0'), 60_000);
      await see(output.locator('pre').filter({ hasText: 'session-42' }));
    });

    it('opens the session’s shell in the browser terminal', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.getByRole('button', { name: 'Open terminal' }).click();
      await see(page.getByTestId('terminal-state').filter({ hasText: /^Connected$/ }), 30_000);
      await page.locator('.xterm').click();
      await page.keyboard.type('echo term-$((6*7))\n');
      await see(page.locator('.xterm-rows').filter({ hasText: 'term-42' }), 30_000);
      await page.getByRole('button', { name: 'Disconnect' }).click();
      await see(page.getByTestId('terminal-state').filter({ hasText: /^Closed$/ }));
    });

    /** Runs a shell command from the Terminal tab and waits for its exit. */
    const run = async (command: string) => {
      await page.getByRole('tab', { name: 'Terminal' }).click();
      await page.getByLabel(`Command to run in ${sessionId()}`).fill(command);
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await see(page.getByTestId('exec-output').getByText('exit 0'), 60_000);
    };

    it('the Workspace tab lists a checkpoint per command, takes one on demand, and restores an older one after a confirmation', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await run('echo first > state.txt');
      const afterFirst = (await server.client.sessions.checkpoints(sessionId())).currentCheckpointId!;
      await run('echo second > state.txt');
      await page.getByRole('tab', { name: 'Workspace' }).click();
      const timeline = page.getByTestId('checkpoint-timeline');
      const older = timeline.getByTestId(`checkpoint-${afterFirst}`);
      await see(older.getByText('after an operation'));
      await timeline.getByRole('button', { name: 'Checkpoint now' }).click();
      await seeToast(page, 'Checkpoint taken');
      await see(timeline.getByRole('row').filter({ hasText: 'checkpoint now' }).getByText('current'));

      await older.getByRole('button', { name: `Restore ${afterFirst}` }).click();
      const dialog = page.getByRole('alertdialog');
      await see(dialog.getByText('files written since are gone', { exact: false }));
      await dialog.getByRole('button', { name: 'Restore' }).click();
      await seeToast(page, 'Workspace restored');
      await see(older.getByText('current'));
      await run('cat state.txt');
      await see(
        page
          .getByTestId('exec-output')
          .locator('pre')
          .filter({ hasText: /^first$/m }),
      );
    });

    it('stops the sandbox from the Workspace tab, then starts it again', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.getByRole('tab', { name: 'Workspace' }).click();
      await page.getByRole('button', { name: 'Stop', exact: true }).click();
      await see(page.getByTestId('workspace-state').getByText('stopped', { exact: true }), 120_000);
      await expect.poll(() => page.getByRole('button', { name: 'Start', exact: true }).isEnabled(), { timeout: 30_000 }).toBe(true);
      expect(await page.getByRole('button', { name: 'Stop', exact: true }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Start', exact: true }).click();
      await see(page.getByTestId('workspace-state').getByText('running', { exact: true }), 120_000);
      await page.getByRole('tab', { name: 'Terminal' }).click();
      await page.getByLabel(`Command to run in ${sessionId()}`).fill('echo again-$((6*7))');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await see(page.getByTestId('exec-output').locator('pre').filter({ hasText: 'again-42' }), 60_000);
    });

    it('ends the session after a confirmation; nothing is offered any more', async (ctx) => {
      if (!available) return ctx.skip(unavailable);
      await page.getByRole('tab', { name: 'Workspace' }).click();
      await page.getByRole('button', { name: 'End session' }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'End session' }).click();
      await seeToast(page, 'Session ended');
      await see(page.getByRole('heading').getByText('ended', { exact: true }), 60_000);
      await expect.poll(() => page.getByRole('button', { name: 'End session' }).isDisabled(), { timeout: 60_000 }).toBe(true);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sessions' }).click();
      const row = page.getByRole('table', { name: 'Sessions' }).getByRole('row').filter({ hasText: 'e2e-agent' });
      await see(row.getByText('ended', { exact: true }));
    });
  });
}
