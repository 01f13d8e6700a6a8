import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';

/** Debian's Chromium: browser tests skip, saying so, where it is not installed. */
export const chromiumPath = '/usr/bin/chromium';
export const hasChromium = fs.existsSync(chromiumPath);

/**
 * The screenshot suites (how each page looks, light, dark and phone) run once, with fast paths
 * on: the pages' HTML and answers are checked over HTTP in both modes by their own suites, and a
 * second round of browsers would add a minute to `npm test` and nothing a person would see.
 */
export const screensRun = hasChromium && process.env.GATEHOUSE_TEST_FAST_PATHS !== 'off';

/** Every page is looked at three ways: light, dark, and a 390 px phone. */
export const screenVariants = [
  { name: 'light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const },
  { name: 'dark', viewport: { width: 1280, height: 800 }, colorScheme: 'dark' as const },
  { name: 'phone', viewport: { width: 390, height: 844 }, colorScheme: 'light' as const },
];
export type ScreenVariant = (typeof screenVariants)[number];

/** Headless, and quiet: nothing of Chromium's own reaches out to the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** What a describe block of browser tests runs against: see chromiumSuite. */
export interface ChromiumSuite<T> {
  browser: Browser;
  /** What `start` returned (a service with its mail server, say). */
  started: T;
  /** A page in one variant, its screenshots in test-artifacts/e2e-browser/<folder>/. */
  open(
    variant: ScreenVariant,
    options?: { javaScriptEnabled?: boolean },
  ): ReturnType<typeof openVariantPage>;
}

/**
 * For a describe block: Chromium and what `start` starts, launched together before its tests and
 * closed after them (Chromium first). `browser` and `started` are set once the tests run; the
 * screenshots go to test-artifacts/e2e-browser/<folder>/ (gitignored).
 */
export function chromiumSuite<T extends { close(): Promise<void> }>(
  folder: string,
  start: () => Promise<T>,
): ChromiumSuite<T> {
  const artifacts = path.resolve('test-artifacts', 'e2e-browser', folder);
  const suite: Partial<ChromiumSuite<T>> = {
    open: (variant, options) => openVariantPage(browserOf(), variant, artifacts, options),
  };
  const browserOf = () => {
    if (suite.browser === undefined) throw new Error('Chromium is not running yet');
    return suite.browser;
  };
  beforeAll(async () => {
    [suite.started, suite.browser] = await Promise.all([start(), launchChromium()]);
  }, 60_000);
  afterAll(async () => {
    await suite.browser?.close();
    await suite.started?.close();
  });
  return suite as ChromiumSuite<T>;
}

/** A fresh browser profile (its own cookie jar) that records CSP violations. */
export interface OpenPage {
  context: BrowserContext;
  page: Page;
  /** Each Content Security Policy violation, however it surfaced: a page must have none. */
  violations: string[];
  close(): Promise<void>;
}

export async function openPage(
  browser: Browser,
  options: {
    viewport: { width: number; height: number };
    colorScheme?: 'light' | 'dark';
    javaScriptEnabled?: boolean;
  },
): Promise<OpenPage> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) violations.push(message.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(
        `Content Security Policy: ${event.violatedDirective} blocked ${event.blockedURI}`,
      );
    });
  });
  return { context, page, violations, close: () => context.close() };
}

/** A page in one variant, with a screenshot maker: `<artifacts>/<variant>-<step>.png`. */
export async function openVariantPage(
  browser: Browser,
  variant: ScreenVariant,
  artifacts: string,
  options: { javaScriptEnabled?: boolean } = {},
): Promise<OpenPage & { shot(step: string): Promise<Buffer> }> {
  fs.mkdirSync(artifacts, { recursive: true });
  const opened = await openPage(browser, { ...variant, ...options });
  const shot = (step: string) =>
    opened.page.screenshot({
      path: path.join(artifacts, `${variant.name}-${step}.png`),
      fullPage: true,
    });
  return { ...opened, shot };
}

const style = (page: Page, selector: string, property: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((el, name) => getComputedStyle(el).getPropertyValue(name), property);

/**
 * What a person would see wrong at a glance: something sticking out sideways, or a theme other
 * than the one the browser prefers (the card and text colours of src/pages/theme.ts).
 */
export async function expectPaintedFor(page: Page, variant: ScreenVariant): Promise<void> {
  await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBe(
    variant.viewport.width,
  );
  const [card, text] =
    variant.colorScheme === 'dark'
      ? ['rgb(22, 27, 34)', 'rgb(230, 237, 243)']
      : ['rgb(255, 255, 255)', 'rgb(31, 35, 40)'];
  await expect(style(page, 'main', 'background-color')).resolves.toBe(card);
  await expect(style(page, 'body', 'color')).resolves.toBe(text);
}
