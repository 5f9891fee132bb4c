import type { Locator, Page } from 'playwright-core';

/** Waits until the locator is visible (long operations get a long timeout). */
export async function see(locator: Locator, timeout = 30_000): Promise<Locator> {
  await locator.first().waitFor({ state: 'visible', timeout });
  return locator.first();
}

/** Waits for a toast whose text contains every given string. */
export async function seeToast(page: Page, ...texts: string[]): Promise<void> {
  let toast = page.locator('[data-sonner-toast]');
  for (const text of texts) toast = toast.filter({ hasText: text });
  await see(toast, 60_000);
}

/** Waits until the custom image status line reads `label`. */
export async function seeSetupStatus(page: Page, label: string, timeout = 60_000): Promise<void> {
  await see(page.getByTestId('setup-status').filter({ hasText: label }), timeout);
}
