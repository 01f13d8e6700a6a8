// The account self-service steps a person takes on Gatehouse's own pages, and the mailed links
// she opens, in Chromium, for the tests that follow a guide (test/clients/integrate-guide.test.ts,
// test/examples/*): each app reaches these pages through its one forwarding rule, with
// ACCOUNT_PAGES_PATH=/api/auth/account, and reads its links from a loopback mail catcher.
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { linkIn } from './mail-reading.js';
import type { LoopbackSmtp } from './smtp.js';

/** Where Gatehouse's account pages are on the app's origin (the guides' ACCOUNT_PAGES_PATH). */
export const pagesPath = '/api/auth/account';

/** Who signs up, and the passwords she chooses on the way. */
export const grace = {
  name: 'Grace Hopper',
  email: 'grace@example.com',
  newEmail: 'grace.hopper@example.com',
  password: 'compilers all the way down',
  changed: 'nanoseconds are a foot long',
  reset: 'the first actual bug was a moth',
};

/** A person's inbox in the catcher: the links Gatehouse mails, each checked to be on `origin`. */
export function inbox(smtp: LoopbackSmtp, origin: string) {
  return {
    /** How many mails have arrived: a later `link` reads only those after. */
    mark: () => smtp.received.length,
    /** The link to `path` in the first mail to `to` (with `subject`) since `since` mails. */
    async link(to: string, subject: RegExp, path: string, since: number): Promise<string> {
      const link = linkIn(await smtp.mailTo(to, since, subject), path);
      // Built on AUTH_URL, the app's origin: opened through the app's one forwarding rule.
      expect(link.startsWith(`${origin}${path}?token=`), link).toBe(true);
      return link;
    },
  };
}

/** Waits for a status line of the page to hold `text`; a refusal said instead fails naming it. */
export async function said(page: Page, text: string): Promise<void> {
  const lines = () => page.locator('[role=status], [role=alert]').allInnerTexts();
  await expect.poll(async () => (await lines()).join(' | '), { timeout: 10_000 }).toContain(text);
}

/** On Gatehouse's sign-up page: fills it in and sends it; Gatehouse mails the link. */
export async function signUpOnGatehousePage(page: Page, person = grace): Promise<void> {
  await page.getByRole('heading', { name: 'Create an account' }).waitFor();
  expect(new URL(page.url()).pathname).toBe(`${pagesPath}/signup`);
  await page.locator('#email').fill(person.email);
  await page.locator('#name').fill(person.name);
  await page.locator('#password').fill(person.password);
  await page.locator('#passwordRepeat').fill(person.password);
  await page.getByRole('button', { name: 'Create the account' }).click();
  await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
}

/** Opens a sign-up's mailed link and makes the account with `password`, chosen there. */
export async function confirmSignUp(page: Page, link: string, password: string): Promise<void> {
  await page.goto(link);
  await page.locator('#password').fill(password);
  await page.locator('#passwordRepeat').fill(password);
  await page.getByRole('button', { name: 'Create the account' }).click();
  await page.getByRole('heading', { name: 'Account created' }).waitFor();
}

/** On Gatehouse's "Forgot your password?" page: asks for a link to `email`. */
export async function askResetOnGatehousePage(page: Page, email: string): Promise<void> {
  await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
  expect(new URL(page.url()).pathname).toBe(`${pagesPath}/password/forgot`);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Send the link' }).click();
  await said(page, 'If an account exists');
}

/** Opens a reset's mailed link and sets `password` on Gatehouse's page. */
export async function resetFromLink(page: Page, link: string, password: string): Promise<void> {
  await page.goto(link);
  await page.locator('#password').fill(password);
  await page.locator('#passwordRepeat').fill(password);
  await page.getByRole('button', { name: 'Set the new password' }).click();
  await page.getByRole('heading', { name: 'Password changed — sign in' }).waitFor();
}

/** Opens a new address's mailed link and confirms it on Gatehouse's page. */
export async function confirmAddressFromLink(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await page.getByRole('button', { name: 'Confirm my address' }).click();
  await page.getByRole('heading', { name: 'Address changed' }).waitFor();
}

/** The app's own change-password form (`form`): the current password, the new one twice, sent. */
export async function changePasswordIn(form: Locator, current: string, next: string) {
  await form.getByLabel('Current password').fill(current);
  await form.getByLabel('New password', { exact: true }).fill(next);
  await form.getByLabel('New password again').fill(next);
  await form.getByRole('button', { name: 'Change password' }).click();
}

/** Grace opens the link mailed to her new address since `since` mails and confirms it. */
export async function confirmNewAddressFromMail(
  page: Page,
  mail: ReturnType<typeof inbox>,
  since: number,
): Promise<void> {
  const link = await mail.link(
    grace.newEmail,
    /Confirm your new address/,
    `${pagesPath}/email/verify`,
    since,
  );
  await confirmAddressFromLink(page, link);
}
