import { expect } from 'vitest';
import { Client } from '../helpers/client.js';
import type { TestServer } from '../helpers/server.js';

// What a browser sends with a top-level navigation or a form submission.
export const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** What a browser sends from a page of this origin: Accept for HTML, its Origin, same-origin. */
export function browser(server: Pick<TestServer, 'url'>): Client {
  return new Client(server.url, {
    accept: browserAccept,
    origin: server.url,
    'sec-fetch-site': 'same-origin',
  });
}

const entities: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};

/** Text of a page as a browser would read it from the markup (entities decoded). */
export function unescape(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => entities[entity]!);
}

/** A hidden field's value as a browser would submit it (the first such field). */
export function hidden(html: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html);
  if (match === null) throw new Error(`no hidden ${name} field`);
  return unescape(match[1] as string);
}

export function noticeOf(html: string): { role: string; text: string } | undefined {
  const match =
    /<div id="notice" class="notice notice-\w+" role="(\w+)"><p>([^<]*)<\/p><\/div>/.exec(html);
  return match === null ? undefined : { role: match[1] as string, text: match[2] as string };
}

/** Fetches the sign-in page as a browser, then submits its form the way a browser would. */
export async function submitSignInForm(
  client: Client,
  fields: { email: string; password: string },
  pagePath = '/api/auth/signin',
): Promise<Response> {
  const page = await (await client.get(pagePath)).text();
  return client.postForm('/api/auth/callback/credentials', {
    csrfToken: hidden(page, 'csrfToken'),
    callbackUrl: hidden(page, 'callbackUrl'),
    ...fields,
  });
}

/** A browser of `server`'s origin, signed in on the sign-in page's form. */
export async function signedInBrowser(
  server: Pick<TestServer, 'url'>,
  fields: { email: string; password: string },
): Promise<Client> {
  const client = browser(server);
  expect((await submitSignInForm(client, fields)).status).toBe(302);
  return client;
}

export async function follow(client: Client, response: Response): Promise<string> {
  const location = response.headers.get('location');
  if (location === null) throw new Error(`no redirect: ${response.status}`);
  const page = await client.get(new URL(location).pathname + new URL(location).search);
  expect(page.status).toBe(200);
  return page.text();
}
