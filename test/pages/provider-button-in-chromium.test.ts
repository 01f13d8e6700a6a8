import { describe, expect, it } from 'vitest';
import { chromiumSuite, screensRun, screenVariants } from '../helpers/chromium.js';
import { startProviderService } from '../helpers/provider-service.js';
import { addUser } from '../helpers/server.js';

// Gatehouse's own pages' "Continue with …" buttons in a real Chromium, against a real OpenID
// Connect provider on loopback (issue 37's way in, from its pages): the sign-in page's button
// reaches the provider and comes back signed in, and the account page's "Add" links the
// identity. Both are forms whose answer redirects to the provider's origin, which the pages'
// CSP `form-action` must allow: Chromium holds a form's redirects to it, and it once blocked
// both buttons silently (nothing left the page).

const light = screenVariants[0];

describe.skipIf(!screensRun)("Gatehouse's provider buttons in Chromium", () => {
  const suite = chromiumSuite('provider-button', () => startProviderService({ signup: 'open' }));

  it('the sign-in page\'s "Continue with Acme SSO" signs a new person in through the provider', async () => {
    const { server, idp } = suite.started;
    idp.login({ sub: 'sso-lin', email: 'lin@example.com', emailVerified: true, name: 'Lin' });
    const { page, violations, shot, close } = await suite.open(light);
    await page.goto(`${server.url}/api/auth/signin`);
    await page.getByRole('button', { name: 'Continue with Acme SSO' }).click();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 15_000 });
    await shot('signed-in-through-provider');
    const session = (await (await page.request.get(`${server.url}/api/auth/session`)).json()) as {
      user?: { email?: string };
    } | null;
    expect(session?.user?.email).toBe('lin@example.com');
    expect(violations).toEqual([]);
    await close();
  });

  it('the account page\'s "Link Acme SSO" links the identity and comes back to the page', async () => {
    const { server, idp } = suite.started;
    await addUser(server, 'ada@example.com', 'correct horse battery staple', 'Ada');
    idp.login({ sub: 'sso-ada', email: 'ada@example.com', emailVerified: true, name: 'Ada' });
    const { page, violations, shot, close } = await suite.open(light);
    await page.goto(`${server.url}/api/auth/signin`);
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.goto(`${server.url}/account`);
    await page.getByRole('button', { name: 'Link Acme SSO' }).click();
    await page.waitForURL((url) => url.pathname === '/account', { timeout: 15_000 });
    const identities = page.locator('section[aria-labelledby="identities-title"]');
    await expect(
      identities.getByText('ada@example.com · linked', { exact: false }).count(),
    ).resolves.toBe(1);
    await shot('identity-linked');
    expect(violations).toEqual([]);
    await close();
  });
});
