import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import {
  productionWithoutMail,
  startMailService,
  startService,
} from '../account/account-service.js';
import {
  chromiumSuite,
  expectPaintedFor,
  screensRun,
  screenVariants as variants,
} from '../helpers/chromium.js';
import { freePort } from '../helpers/processes.js';

// Issue 35, item 3: the sign-in page's enrolment step (SECOND_FACTOR=required) in a real
// Chromium without script against the service in process, light, dark and a 390 px phone: it says
// where the code went, refuses a wrong mailed code in words, and enrols with the code read from
// the loopback mail server; with mail off it asks for the administrator's code. Screenshots in
// test-artifacts/e2e-browser/enrolment/ (gitignored) for a person to look at, the CSP holding.

const password = 'correct horse battery staple';
const required = { SECOND_FACTOR: 'required' };

describe.skipIf(!screensRun)('the enrolment step of the sign-in page in Chromium', () => {
  const suite = chromiumSuite('enrolment', () =>
    startMailService({
      users: variants.map((v) => `${v.name}@example.com`),
      password,
      env: required,
    }),
  );

  it.each(variants)(
    "$name: password → the step names the address → a wrong mailed code said in words → the mailed code and the app's enrol",
    async (variant) => {
      const email = `${variant.name}@example.com`;
      const { service, smtp } = suite.started;
      const { context, page, violations, shot } = await suite.open(variant, {
        javaScriptEnabled: false,
      });
      await page.goto(`${service.url}/api/auth/signin`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      const before = smtp.received.length;
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Set up two-step sign-in');
      expect(await page.getByRole('status').textContent()).toContain(
        `we have mailed a code to ${email}`,
      );
      await expectPaintedFor(page, variant);
      await shot('1-step');

      const mail = await smtp.mailTo(email, before, /set up two-step sign-in/);
      const code = /Your code: ([A-Z0-9]{8})/.exec(mail.parsed.text ?? '')?.[1] ?? '';
      const key = (await page.locator('.fact code').textContent()) ?? '';
      const totp = new TOTP({ secret: Secret.fromBase32(key) });
      await page.getByLabel(`Code from the mail we sent to ${email}`).fill('WRNGCDEX');
      await page.getByLabel('Code from your authenticator app').fill(totp.generate());
      await page.getByRole('button', { name: 'Turn on and sign in' }).click();
      expect(await page.getByRole('alert').textContent()).toContain(
        `That is not the code we mailed to ${email}`,
      );
      await expectPaintedFor(page, variant);
      await shot('2-wrong-mailed-code');

      await page.getByLabel(`Code from the mail we sent to ${email}`).fill(code);
      await page.getByLabel('Code from your authenticator app').fill(totp.generate());
      await page.getByRole('button', { name: 'Turn on and sign in' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Two-step sign-in is on');
      await shot('3-enrolled');
      expect(violations).toEqual([]);
      await context.close();
    },
    60_000,
  );
});

describe.skipIf(!screensRun)('the enrolment step with mail off in Chromium', () => {
  const suite = chromiumSuite('enrolment', async () => {
    const port = await freePort();
    return startService({
      users: variants.map((v) => `${v.name}-off@example.com`),
      password,
      env: {
        ...productionWithoutMail,
        ...required,
        // Loopback over plain http: production takes it without AUTH_URL_ALLOW_HTTP.
        AUTH_URL: `http://127.0.0.1:${port}`,
        PORT: String(port),
        FACTOR_KEY: randomBytes(33).toString('base64'),
      },
    });
  });

  it.each(variants)(
    "$name: password → the step asks for the administrator's enrolment code",
    async (variant) => {
      const email = `${variant.name}-off@example.com`;
      const { context, page, violations, shot } = await suite.open(variant, {
        javaScriptEnabled: false,
      });
      await page.goto(`${suite.started.service.url}/api/auth/signin`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      expect(await page.getByRole('status').textContent()).toContain(
        'ask your administrator for an enrolment code',
      );
      await expect(page.getByLabel('Enrolment code from your administrator').count()).resolves.toBe(
        1,
      );
      await expectPaintedFor(page, variant);
      await shot('4-mail-off-step');
      expect(violations).toEqual([]);
      await context.close();
    },
    60_000,
  );
});
