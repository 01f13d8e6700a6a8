import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { capturedMail } from '../helpers/captured-mail.js';
import { accountPaths } from '../../src/account/register.js';
import { buildAdminApp } from '../../src/admin/admin-app.js';
import { adminRoutes, openApiPath } from '../../src/admin/routes.js';
import { tokenPaths } from '../../src/tokens/register.js';
import { createOutboxStore } from '../../src/mail/mail-outbox-store.js';
import { noObserver } from '../../src/observe/observer.js';
import { createWebhookStore } from '../../src/webhooks/webhook-outbox-store.js';

const documentPath = path.resolve(import.meta.dirname, '../../docs/openapi.yaml');
const password = 'correct horse battery staple';

interface ResponseSpec {
  content?: Record<string, { schema?: object }>;
  headers?: Record<string, unknown>;
}
interface Spec {
  paths: Record<string, Record<string, { responses: Record<string, ResponseSpec> }>>;
  components: { responses: Record<string, ResponseSpec> };
}

let spec: Spec;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/**
 * The live answer must be one the document describes: its status is listed for that route and
 * method (or is a catalogue answer for an unknown route), and a JSON body matches the schema.
 */
async function conforms(
  response: Response,
  method: string,
  route: string | undefined,
  fallback?: string,
): Promise<void> {
  const status = String(response.status);
  const documented =
    route === undefined
      ? spec.components.responses[fallback as string]
      : spec.paths[route]?.[method.toLowerCase()]?.responses[status];
  expect(documented, `${method} ${route ?? '(any)'} ${status} is documented`).toBeDefined();
  const type = response.headers.get('content-type') ?? '';
  const body = await response.text();
  if (method !== 'HEAD' && type.startsWith('application/json')) {
    const schema = documented?.content?.['application/json']?.schema;
    expect(schema, `${method} ${route} ${status} documents a JSON body`).toBeDefined();
    const validate = ajv.compile(schema as object);
    const ok = validate(JSON.parse(body));
    expect(ok, `${method} ${route} ${status}: ${ajv.errorsText(validate.errors)} in ${body}`).toBe(
      true,
    );
  } else if (type.startsWith('text/html')) {
    expect(documented?.content?.['text/html']).toBeDefined();
  }
}

/** `GET /api/account/tokens`'s answer, as far as these checks read it. */
type Listed = { tokens: { id: string }[] };

describe('docs/openapi.yaml', () => {
  let server: TestServer;
  let draining = false;
  beforeAll(async () => {
    const validator = new Validator();
    const result = await validator.validate(documentPath);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    spec = validator.resolveRefs() as unknown as Spec;
    server = await startServer({
      isDraining: () => draining,
      throttle: { emailMaxFailures: 1 },
    });
    await addUser(server, 'ada@example.com', password, 'Ada');
    await addUser(server, 'locked@example.com', password);
    await addUser(server, 'grace@example.com', password);
  });
  afterAll(() => server.close());

  const url = (route: string) => `${server.url}${route}`;

  it('is a valid OpenAPI 3.1 document that lists every route Gatehouse serves', () => {
    expect(Object.keys(spec.paths).sort()).toEqual(
      // A path served for two methods (GET and POST /api/account/tokens) is one entry.
      [
        ...new Set([
          '/',
          '/api/auth/callback/credentials',
          '/api/auth/callback/passkey',
          // An identity provider's, for each one configured (none in this suite's server).
          '/api/auth/callback/{provider}',
          '/api/auth/callback/identity-offer',
          // Sign-in by e-mail, with EMAIL_SIGNIN=on (src/account/email-signin/).
          '/api/auth/signin/email',
          '/api/auth/signin/nodemailer',
          '/api/auth/verify-request',
          '/api/auth/callback/email',
          '/api/auth/csrf',
          '/api/auth/enrolment/totp',
          '/api/auth/error',
          '/api/auth/providers',
          '/api/auth/session',
          '/api/auth/signin',
          '/api/auth/signin/credentials',
          '/api/auth/signin/{provider}',
          '/api/auth/signout',
          '/api/auth/webauthn-options/passkey',
          '/api/health',
          '/api/health/ready',
          // Tokens for other backends (src/tokens/register.ts); introspection when configured.
          ...Object.values(tokenPaths),
          // The account wing's own table says what it serves (src/account/register.ts).
          ...accountPaths({ mail: true, accountPage: true }),
          // The admin listener's, from its route table (src/admin/routes.ts).
          ...new Set(adminRoutes.map((route) => openApiPath(route.path))),
        ]),
      ].sort(),
    );
  });

  it('health and readiness answer as documented, draining included', async () => {
    await conforms(await fetch(url('/api/health')), 'GET', '/api/health');
    await conforms(await fetch(url('/api/health'), { method: 'HEAD' }), 'HEAD', '/api/health');
    await conforms(await fetch(url('/api/health'), { method: 'DELETE' }), 'GET', '/api/health');
    await conforms(await fetch(url('/api/health/ready')), 'GET', '/api/health/ready');
    draining = true;
    try {
      const response = await fetch(url('/api/health/ready'));
      expect(response.status).toBe(503);
      await conforms(response, 'GET', '/api/health/ready');
    } finally {
      draining = false;
    }
  });

  it('the read routes and pages answer as documented', async () => {
    await conforms(await fetch(url('/api/auth/session')), 'GET', '/api/auth/session');
    await conforms(await fetch(url('/api/auth/csrf')), 'GET', '/api/auth/csrf');
    await conforms(await fetch(url('/api/auth/providers')), 'GET', '/api/auth/providers');
    await conforms(await fetch(url('/api/auth/signin')), 'GET', '/api/auth/signin');
    await conforms(await fetch(url('/api/auth/signout')), 'GET', '/api/auth/signout');
    await conforms(await fetch(url('/api/auth/error')), 'GET', '/api/auth/error');
    // Factors are not required here.
    await conforms(await fetch(url('/api/auth/enrolment/totp')), 'GET', '/api/auth/enrolment/totp');
    await conforms(await fetch(url('/'), { redirect: 'manual' }), 'GET', '/');
    await conforms(await fetch(url('/account'), { redirect: 'manual' }), 'GET', '/account');
    await conforms(await fetch(url('/api/nothing-here')), 'GET', undefined, 'NotFound');
  });

  it.each(['/api/auth/callback/credentials', '/api/auth/signin/credentials'])(
    'sign-in at %s answers as documented in every outcome it can be made to give',
    async (route) => {
      const client = new Client(server.url);
      await conforms(await client.signIn('ada@example.com', password, route), 'POST', route);
      await conforms(await client.get('/api/auth/session'), 'GET', '/api/auth/session');
      const csrfToken = await client.csrfToken();
      const form = { csrfToken, email: 'ada@example.com', password };
      await conforms(await client.postForm(route, form), 'POST', route);
      await conforms(
        await client.request(route, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"email": ',
        }),
        'POST',
        route,
      );
      await conforms(
        await client.postForm(route, form, { 'sec-fetch-site': 'cross-site' }),
        'POST',
        route,
      );
      await conforms(
        await client.request(route, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: 'x',
        }),
        'POST',
        route,
      );
      await conforms(
        await client.postForm(route, { ...form, password: 'x'.repeat(20_000) }),
        'POST',
        route,
      );
      const locked = new Client(server.url);
      await locked.signIn('locked@example.com', 'a wrong password', route);
      const throttled = await locked.signIn('locked@example.com', password, route);
      expect(throttled.status).toBe(429);
      await conforms(throttled, 'POST', route);
    },
  );

  it('sign-in by e-mail answers as documented in every outcome it can be made to give', async () => {
    const mail = capturedMail();
    // The mail budgets follow the account wing's throttle settings: one mail request per
    // address and client, so the next is 429.
    const throttle = {
      emailMaxFailures: 1,
      ipMaxFailures: 100,
      windowSeconds: 900,
      lockSeconds: 900,
    };
    const on = await startServer({
      config: { emailSignIn: true, throttle },
      wrap: (deps) => ({ ...deps, mail: mail.queue }),
    });
    try {
      await addUser(on, 'ada@example.com', password);
      const client = new Client(on.url);
      const providers = await client.get('/api/auth/providers');
      await conforms(providers, 'GET', '/api/auth/providers');
      for (const [route, email] of [
        ['/api/auth/signin/email', 'ada@example.com'],
        ['/api/auth/signin/nodemailer', 'grace@example.com'],
      ] as const) {
        const csrfToken = await client.csrfToken();
        const ask = (fields: Record<string, string>, json = true) =>
          client.postForm(route, fields, json ? { 'x-auth-return-redirect': '1' } : {});
        await conforms(await ask({ csrfToken, email }), 'POST', route);
        await conforms(await ask({ csrfToken, email: `form.${email}` }, false), 'POST', route);
        await conforms(await ask({ csrfToken, email: 'nobody' }), 'POST', route);
        await conforms(await ask({ email: 'ada@example.com' }), 'POST', route);
        await conforms(
          await client.postForm(route, { csrfToken }, { 'sec-fetch-site': 'cross-site' }),
          'POST',
          route,
        );
      }
      // The client's budget for the address (THROTTLE_EMAIL_MAX_FAILURES, 1) is spent.
      const limited = await client.postForm(
        '/api/auth/signin/email',
        { csrfToken: await client.csrfToken(), email: 'ada@example.com' },
        { 'x-auth-return-redirect': '1' },
      );
      expect(limited.status).toBe(429);
      await conforms(limited, 'POST', '/api/auth/signin/email');
      const inbox = '/api/auth/verify-request';
      await conforms(await client.get(`${inbox}?provider=email&type=email`), 'GET', inbox);
      const link = '/api/auth/callback/email';
      // Queued after the answer: polled for, as a loaded machine may take more than a moment.
      await expect
        .poll(() => mail.mails.length, { timeout: 20_000, interval: 25 })
        .toBeGreaterThan(0);
      const mailed = new URL(mail.mails[0]?.values.link ?? '');
      await conforms(await client.get(`${link}${mailed.search}`), 'GET', link);
      await conforms(await client.get(`${link}?token=spent`), 'GET', link);
      const csrfToken = await client.csrfToken();
      const post = (fields: Record<string, string>) =>
        client.postForm(link, { csrfToken, ...fields }, { 'x-auth-return-redirect': '1' });
      await conforms(await post({ token: 'not a token' }), 'POST', link);
      await conforms(await post({ email: 'ada@example.com', code: 'WRONG234' }), 'POST', link);
      await conforms(await post({ token: mailed.searchParams.get('token') ?? '' }), 'POST', link);
    } finally {
      await on.close();
    }
  });

  it('the token routes and personal access tokens answer as documented', async () => {
    const client = new Client(server.url);
    await conforms(await client.get('/api/auth/token'), 'GET', '/api/auth/token');
    await client.signIn('grace@example.com', password);
    await conforms(await client.get('/api/auth/token'), 'GET', '/api/auth/token');
    await conforms(
      await client.get('/api/auth/token', { authorization: 'Bearer gat_wrong' }),
      'GET',
      '/api/auth/token',
    );
    for (const path of [
      tokenPaths.jwks,
      tokenPaths.rootJwks,
      tokenPaths.metadata,
      tokenPaths.rootMetadata,
    ])
      await conforms(await fetch(url(path)), 'GET', path);
    // Introspection is off without INTROSPECTION_TOKEN_FILE.
    await conforms(
      await fetch(url(tokenPaths.introspect), { method: 'POST' }),
      'POST',
      tokenPaths.introspect,
    );
    const tokens = '/api/account/tokens';
    await conforms(await client.get(tokens), 'GET', tokens);
    const csrfToken = await client.csrfToken();
    const json = (body: object) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ csrfToken, ...body }),
    });
    const made = await client.request(tokens, json({ name: 'ci' }));
    const { id } = (await made.clone().json()) as { id: string };
    await conforms(made, 'POST', tokens);
    await conforms(await client.request(tokens, json({ name: '' })), 'POST', tokens);
    await conforms(await client.get(tokens), 'GET', tokens);
    const revoke = '/api/account/tokens/{id}/revoke';
    await conforms(
      await client.request(`/api/account/tokens/${id}/revoke`, json({})),
      'POST',
      revoke,
    );
    await conforms(
      await client.request(`/api/account/tokens/${id}/revoke`, json({})),
      'POST',
      revoke,
    );
  });

  it('the account pages answer as documented', async () => {
    const browser = { accept: 'text/html', origin: server.url, 'sec-fetch-site': 'same-origin' };
    const anonymous = new Client(server.url, browser);
    await conforms(await anonymous.get('/account'), 'GET', '/account');
    const client = new Client(server.url, browser);
    await client.signIn('ada@example.com', password);
    const csrfToken = await client.csrfToken();
    await conforms(await client.get('/account'), 'GET', '/account');
    await conforms(await client.get('/account?done=profile'), 'GET', '/account');
    // The wrong method: documented with the route's GET, as for /api/account.
    await conforms(await client.request('/account', { method: 'POST' }), 'GET', '/account');
    const profile = '/account/profile';
    await conforms(await client.get(profile), 'GET', profile);
    await conforms(await client.postForm(profile, { csrfToken, name: 'Ada' }), 'POST', profile);
    await conforms(await client.postForm(profile, { csrfToken, name: ' ' }), 'POST', profile);
    await conforms(await client.postForm(profile, { name: 'Ada' }), 'POST', profile);
    await conforms(
      await client.postForm(
        profile,
        { csrfToken, name: 'Ada' },
        { origin: 'https://evil.example' },
      ),
      'POST',
      profile,
    );
    await conforms(
      await client.request(profile, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }),
      'POST',
      profile,
    );
    await conforms(await anonymous.postForm(profile, { name: 'Ada' }), 'POST', profile);
    const tokens = '/account/tokens';
    const tokenForm = { csrfToken, name: 'ci', expiresInDays: '30', currentPassword: password };
    await conforms(await client.get(tokens), 'GET', tokens);
    await conforms(await client.postForm(tokens, tokenForm), 'POST', tokens);
    await conforms(await client.postForm(tokens, { ...tokenForm, name: ' ' }), 'POST', tokens);
    const revoke = '/account/tokens/revoke';
    const [made] = ((await (await client.get('/api/account/tokens')).json()) as Listed).tokens;
    await conforms(await client.get(revoke), 'GET', revoke);
    for (let i = 0; i < 2; i += 1)
      await conforms(
        await client.postForm(revoke, { csrfToken, id: made?.id ?? '' }),
        'POST',
        revoke,
      );
    const change = '/account/password/change';
    await conforms(await client.get(change), 'GET', change);
    const fields = (
      currentPassword: string,
      newPassword: string,
      newPasswordRepeat = newPassword,
    ) => ({
      csrfToken,
      currentPassword,
      newPassword,
      newPasswordRepeat,
    });
    await conforms(await client.postForm(change, fields(password, 'short')), 'POST', change);
    await conforms(await client.postForm(change, fields(password, 'a', 'b')), 'POST', change);
    await conforms(await client.postForm(change, fields(password, password)), 'POST', change);
  });

  it('the passkey routes answer as documented in the outcomes a test without an authenticator can give', async () => {
    const options = '/api/auth/webauthn-options/passkey';
    const callback = '/api/auth/callback/passkey';
    const anonymous = new Client(server.url);
    await conforms(await anonymous.get(`${options}?action=authenticate`), 'GET', options);
    await conforms(await anonymous.get(options), 'GET', options);
    await conforms(await anonymous.get(`${options}?action=register`), 'GET', options);
    await conforms(await anonymous.get(`${options}?action=other`), 'GET', options);
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    await conforms(await client.get(`${options}?action=register`), 'GET', options);
    const csrfToken = await client.csrfToken();
    const form = { csrfToken, action: 'authenticate', data: '{"id":"AAAA"}' };
    await conforms(await client.postForm(callback, form), 'POST', callback);
    await conforms(
      await client.postForm(callback, form, { 'x-auth-return-redirect': '1' }),
      'POST',
      callback,
    );
    await conforms(await client.postForm(callback, { ...form, action: 'x' }), 'POST', callback);
    await conforms(
      await client.postForm(callback, { ...form, action: 'register' }),
      'POST',
      callback,
    );
    await conforms(
      await client.postForm(callback, { action: 'register', data: '{}' }),
      'POST',
      callback,
    );
    const list = '/api/account/passkeys';
    await conforms(await anonymous.get(list), 'GET', list);
    await conforms(await client.get(list), 'GET', list);
    const post = (route: string, body: Record<string, unknown>) =>
      client.request(route, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
        body: JSON.stringify(body),
      });
    const rename = '/api/account/passkeys/{id}/rename';
    const remove = '/api/account/passkeys/{id}/remove';
    await conforms(await post('/api/account/passkeys/nope/rename', { name: 'A' }), 'POST', rename);
    await conforms(await post('/api/account/passkeys/nope/rename', { name: '' }), 'POST', rename);
    await conforms(await post('/api/account/passkeys/nope/remove', {}), 'POST', remove);
    const browser = { accept: 'text/html', origin: server.url, 'sec-fetch-site': 'same-origin' };
    const pages = new Client(server.url, browser);
    await pages.signIn('ada@example.com', password);
    const pageToken = await pages.csrfToken();
    for (const page of ['/account/passkeys/rename', '/account/passkeys/remove']) {
      await conforms(await pages.get(page), 'GET', page);
      const fields = { csrfToken: pageToken, id: 'nope', name: 'A' };
      await conforms(await pages.postForm(page, fields), 'POST', page);
    }
  });

  it('the account routes answer as documented in every outcome they can be made to give', async () => {
    const anonymous = new Client(server.url);
    await conforms(await anonymous.get('/api/account'), 'GET', '/api/account');
    await conforms(await anonymous.get('/api/account/events'), 'GET', '/api/account/events');
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const csrfToken = await client.csrfToken();
    const post = (route: string, body: Record<string, unknown>, type = 'application/json') =>
      client.request(route, {
        method: 'POST',
        headers: { 'content-type': type, 'x-csrf-token': csrfToken },
        body: type === 'application/json' ? JSON.stringify(body) : 'x',
      });
    await conforms(await client.get('/api/account'), 'GET', '/api/account');
    await conforms(await client.get('/api/account/events'), 'GET', '/api/account/events');
    const sessions = '/api/account/sessions';
    await conforms(await anonymous.get(sessions), 'GET', sessions);
    await conforms(await client.get(sessions), 'GET', sessions);
    const other = new Client(server.url);
    await other.signIn('ada@example.com', password);
    const listed = (await (await client.get(sessions)).json()) as {
      sessions: { id: string; current: boolean }[];
    };
    const otherId = listed.sessions.find((session) => !session.current)?.id ?? '';
    const revoke = '/api/account/sessions/{id}/revoke';
    await conforms(await post(`${sessions}/unknown-session-id/revoke`, {}), 'POST', revoke);
    await conforms(await post(`${sessions}/${otherId}/revoke`, {}), 'POST', revoke);
    await conforms(
      await post(`${sessions}/revoke-others`, {}),
      'POST',
      `${sessions}/revoke-others`,
    );
    await conforms(
      await client.request('/api/account', { method: 'DELETE' }),
      'GET',
      '/api/account',
    );
    const profile = '/api/account/profile';
    await conforms(await post(profile, { name: 'Ada' }), 'POST', profile);
    await conforms(await post(profile, { name: '' }), 'POST', profile);
    await conforms(await post(profile, {}, 'text/plain'), 'POST', profile);
    await conforms(await client.postForm(profile, { name: 'Ada' }), 'POST', profile);
    await conforms(await anonymous.postForm(profile, { name: 'Ada' }), 'POST', profile);
    const reauth = '/api/account/reauthenticate';
    await conforms(await post(reauth, { password }), 'POST', reauth);
    await conforms(await post(reauth, { password: 'wrong' }), 'POST', reauth);
    const change = '/api/account/password/change';
    await conforms(
      await post(change, { currentPassword: password, newPassword: 'short' }),
      'POST',
      change,
    );
    await conforms(
      await post(change, { currentPassword: password, newPassword: password }),
      'POST',
      change,
    );
    const locked = new Client(server.url);
    await locked.signIn('grace@example.com', password);
    const lockedCsrf = await locked.csrfToken();
    const wrong = { csrfToken: lockedCsrf, currentPassword: 'wrong', newPassword: password };
    await conforms(await locked.postForm(change, wrong), 'POST', change);
    const throttled = await locked.postForm(change, wrong);
    expect(throttled.status).toBe(429);
    await conforms(throttled, 'POST', change);
  });

  it('the invitation route and page answer as documented, with mail off too', async () => {
    const client = new Client(server.url);
    const csrfToken = await client.csrfToken();
    const accept = '/api/account/invitation/accept';
    const post = (body: Record<string, unknown>) =>
      client.request(accept, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ csrfToken, ...body }),
      });
    await conforms(await post({ token: 'nope', password }), 'POST', accept);
    await conforms(await post({ token: 'nope', password: 'short' }), 'POST', accept);
    await conforms(await post({ password }), 'POST', accept);
    await conforms(await client.postForm(accept, { token: 'nope', password }), 'POST', accept);
    await conforms(await fetch(url(accept), { method: 'POST' }), 'POST', accept);
    await conforms(await fetch(url(accept)), 'POST', accept);
    const page = '/account/invitation';
    await conforms(await client.get(`${page}?token=nope`), 'GET', page);
    await conforms(
      await client.postForm(
        page,
        { csrfToken, token: 'nope', password },
        { origin: 'null', 'sec-fetch-site': 'same-origin' },
      ),
      'POST',
      page,
    );
  });

  it('session update and sign-out answer as documented', async () => {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const csrfToken = await client.csrfToken();
    await conforms(
      await client.request('/api/auth/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ csrfToken, data: { name: 'Mallory' } }),
      }),
      'POST',
      '/api/auth/session',
    );
    await conforms(
      await client.postForm('/api/auth/signout', { csrfToken }, { 'sec-fetch-site': 'cross-site' }),
      'POST',
      '/api/auth/signout',
    );
    await conforms(await client.signOut(), 'POST', '/api/auth/signout');
    await client.signIn('ada@example.com', password);
    await conforms(
      await client.postForm('/api/auth/signout', { csrfToken: await client.csrfToken() }),
      'POST',
      '/api/auth/signout',
    );
  });

  it('the admin API answers as documented, on its own listener', async () => {
    const admin = buildAdminApp({
      config: {
        authUrl: undefined,
        trustProxy: [],
        bodyLimitBytes: 16 * 1024,
        requestTimeoutMs: 10_000,
        fastPaths: false,
      },
      ports: {
        db: server.db,
        now: () => Date.now(),
        throttle: server.services.throttle,
        observer: noObserver,
        mail: undefined,
        mailStore: createOutboxStore(server.db, 'sqlite'),
        webhooks: createWebhookStore(server.db, 'sqlite'),
        origin: 'http://127.0.0.1:3000',
        inviteTtlSeconds: 3600,
        auditRetentionDays: 365,
        sessionLifetime: { maxAgeSeconds: 86_400, absoluteMaxAgeSeconds: 86_400 },
      },
      tokens: { authenticate: (header) => (header === 'Bearer admin-token' ? 'test' : null) },
      logger: false,
    });
    await admin.listen({ host: '127.0.0.1', port: 0 });
    try {
      const address = admin.server.address() as { port: number };
      const call = (route: string, method = 'GET', body?: unknown, token = 'admin-token') =>
        fetch(`http://127.0.0.1:${address.port}${route}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body !== undefined && { 'content-type': 'application/json' }),
          },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
      const users = '/api/admin/users';
      await conforms(await call(users), 'GET', users);
      await conforms(await call(`${users}?limit=1`), 'GET', users);
      await conforms(await call(`${users}?cursor=!`), 'GET', users);
      await conforms(await call(users, 'GET', undefined, 'wrong'), 'GET', users);
      const list = (await (await call(`${users}?query=grace`)).json()) as {
        users: { id: string }[];
      };
      const id = list.users[0]?.id ?? '';
      const one = '/api/admin/users/{id}';
      await conforms(await call(`${users}/${id}`), 'GET', one);
      await conforms(await call(`${users}/00000000-0000-4000-8000-000000000000`), 'GET', one);
      for (const action of ['disable', 'enable', 'unlock', 'verify-email']) {
        const route = `/api/admin/users/{id}/${action}`;
        await conforms(await call(`${users}/${id}/${action}`, 'POST'), 'POST', route);
        await conforms(await call(`${users}/nope/${action}`, 'POST'), 'POST', route);
      }
      const email = '/api/admin/users/{id}/email';
      await conforms(await call(`${users}/${id}/email`, 'POST', { email: 'x' }), 'POST', email);
      await conforms(
        await call(`${users}/${id}/email`, 'POST', { email: 'ada@example.com' }),
        'POST',
        email,
      );
      const name = '/api/admin/users/{id}/name';
      await conforms(await call(`${users}/${id}/name`, 'POST', { name: 'Grace' }), 'POST', name);
      const invitations = '/api/admin/invitations';
      await conforms(
        await call(invitations, 'POST', { email: 'new@example.com' }),
        'POST',
        invitations,
      );
      await conforms(
        await call(invitations, 'POST', { email: 'new@example.com', printLink: true }),
        'POST',
        invitations,
      );
      await conforms(
        await call(invitations, 'POST', { email: 'ada@example.com', printLink: true }),
        'POST',
        invitations,
      );
      await conforms(await call('/api/admin/mail'), 'GET', '/api/admin/mail');
      await conforms(await call('/api/admin/mail?state=nope'), 'GET', '/api/admin/mail');
      const mailRetry = '/api/admin/mail/{id}/retry';
      await conforms(await call(`/api/admin/mail/${id}/retry`, 'POST'), 'POST', mailRetry);
      await conforms(await call('/api/admin/webhooks'), 'GET', '/api/admin/webhooks');
      const hookRetry = '/api/admin/webhooks/{id}/retry';
      await conforms(await call(`/api/admin/webhooks/${id}/retry`, 'POST'), 'POST', hookRetry);
      const sessions = '/api/admin/users/{id}/sessions';
      await conforms(await call(`${users}/${id}/sessions`), 'GET', sessions);
      await conforms(await call(`${users}/nope/sessions`), 'GET', sessions);
      const revoke = '/api/admin/users/{id}/sessions/revoke';
      await conforms(await call(`${users}/${id}/sessions/revoke`, 'POST'), 'POST', revoke);
      await conforms(await call('/api/admin/audit?limit=2'), 'GET', '/api/admin/audit');
      await conforms(await call('/api/admin/audit?since=never'), 'GET', '/api/admin/audit');
      await conforms(await call('/api/admin/audit/verify'), 'GET', '/api/admin/audit/verify');
      await conforms(await call(`${users}/${id}`, 'DELETE'), 'DELETE', one);
      await conforms(await call(`${users}/${id}`, 'DELETE'), 'DELETE', one);
    } finally {
      await admin.close();
    }
  });
});
