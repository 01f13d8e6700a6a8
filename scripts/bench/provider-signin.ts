// What a sign-in with an identity provider costs (issue 37): the built service in production on
// SQLite, against a real OpenID Connect provider on loopback (oidc-provider, test/helpers/), one
// new browser per sign-in. Each sign-in's legs are timed at the browser: the start (Gatehouse
// reads the provider's discovery document and answers 302), the provider's own round trip
// (not Gatehouse's), and the callback (Gatehouse checks state, PKCE and nonce, exchanges the
// code, checks the ID token, reads userinfo, writes the session); a password sign-in of the same
// account beside it. Sequential: the cost of one, not throughput.
//
// Usage: npm run bench:provider   (under 60 s; loopback only, bounded)
import { startIdentityProvider } from '../../test/helpers/oidc-idp.ts';
import { gatehouseArgs, median, now, password } from './common.ts';
import { addUser, gatehouseEnv } from './gatehouse.ts';
import { cookieHeader, cookiePairs, getCsrf, postCredentials, type CookieJar } from './http.ts';
import { cleanup, freePort, installCleanupHandlers, makeTemp, startServer } from './processes.ts';

const rounds = 60;
const warmup = 5;
const email = 'password-bench@example.com';

const p95 = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)] ?? NaN;

async function providerSignIn(
  base: string,
  idp: Awaited<ReturnType<typeof startIdentityProvider>>,
) {
  const csrf = await getCsrf(base);
  const jar: CookieJar = new Map(csrf.cookies);
  let t0 = now();
  const start = await fetch(`${base}/api/auth/signin/oidc`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookieHeader(jar),
    },
    body: new URLSearchParams({ csrfToken: csrf.token, callbackUrl: base }).toString(),
  });
  const startMs = now() - t0;
  for (const [name, value] of cookiePairs(start)) jar.set(name, value);
  const location = start.headers.get('location') ?? '';
  if (start.status !== 302 || !location.startsWith(idp.issuer))
    throw new Error(`signin/oidc answered ${start.status} ${location}`);
  t0 = now();
  const back = new URL(await idp.followAuthorization(location));
  const providerMs = now() - t0;
  t0 = now();
  const landed = await fetch(`${base}${back.pathname}${back.search}`, {
    redirect: 'manual',
    headers: { cookie: cookieHeader(jar) },
  });
  const callbackMs = now() - t0;
  const session = cookiePairs(landed);
  if (landed.status !== 302 || ![...session.keys()].some((name) => name.endsWith('session-token')))
    throw new Error(`callback/oidc answered ${landed.status} ${landed.headers.get('location')}`);
  return { startMs, providerMs, callbackMs };
}

async function main(): Promise<void> {
  installCleanupHandlers();
  const idp = await startIdentityProvider();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  idp.setClients([
    {
      clientId: 'bench',
      clientSecret: 'bench-client-secret-0123456789',
      redirectUris: [`${base}/api/auth/callback/oidc`],
    },
  ]);
  const env = gatehouseEnv({
    port,
    dataDir: makeTemp('provider'),
    AUTH_OIDC_ISSUER: idp.issuer,
    AUTH_OIDC_ID: 'bench',
    AUTH_OIDC_SECRET: 'bench-client-secret-0123456789',
    AUTH_OIDC_SIGNUP: 'open',
    THROTTLE_EMAIL_MAX_FAILURES: '1000000',
    THROTTLE_IP_MAX_FAILURES: '1000000',
    THROTTLE_EMAIL_MAX_ATTEMPTS: '1000000',
    THROTTLE_IP_MAX_ATTEMPTS: '1000000',
  });
  addUser(env, { email, password });
  const server = await startServer('gatehouse', gatehouseArgs, env, { cpu: null });

  // A new person, signed up by the first sign-in (AUTH_OIDC_SIGNUP=open); the rest sign in
  // the account that identity is linked to.
  idp.login({ sub: 'bench-person', email: 'provider-person@example.com', emailVerified: true });
  const legs = { start: [] as number[], provider: [] as number[], callback: [] as number[] };
  const passwordMs: number[] = [];
  for (let i = 0; i < rounds + warmup; i += 1) {
    const csrf = await getCsrf(server.base);
    const t0 = now();
    const { response } = await postCredentials(server.base, csrf, email, password);
    if (i >= warmup) passwordMs.push(now() - t0);
    if (response.status !== 200 && response.status !== 302)
      throw new Error(`password sign-in answered ${response.status}`);
  }
  for (let i = 0; i < rounds + warmup; i += 1) {
    const one = await providerSignIn(server.base, idp);
    if (i < warmup) continue;
    legs.start.push(one.startMs);
    legs.provider.push(one.providerMs);
    legs.callback.push(one.callbackMs);
  }
  const line = (label: string, values: number[]) =>
    `${label.padEnd(46)} median ${median(values).toFixed(1).padStart(6)} ms   p95 ${p95(values).toFixed(1).padStart(6)} ms`;
  const gatehouseMs = legs.start.map((ms, i) => ms + (legs.callback[i] ?? 0));
  process.stdout.write(
    [
      `provider sign-in, ${rounds} in a row (after ${warmup} to warm up), loopback:`,
      line('  start: POST /api/auth/signin/oidc → 302', legs.start),
      line('  the provider itself (not Gatehouse)', legs.provider),
      line('  callback: GET /api/auth/callback/oidc → 302', legs.callback),
      line('  Gatehouse in all (start + callback)', gatehouseMs),
      line('password sign-in (argon2id), for comparison', passwordMs),
      '',
    ].join('\n'),
  );
  await idp.close();
  await cleanup();
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  await cleanup();
  process.exit(1);
});
