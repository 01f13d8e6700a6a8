// Throughput of `POST /api/account/password/forgot` (issue 19): the built service in production
// mode on SQLite, with a real SMTP server on loopback (smtp-server, in this process) taking every
// mail, so the outbox worker delivers while the route is measured. Half the requests name an
// account and half an unknown address (each a new one), interleaved; every answer must be 202.
// The throttles are raised out of the way: this measures the route, not the limit.
//
// Usage: npm run build && node scripts/bench/forgot.ts   (under 90 s; loopback only, bounded)
import { SMTPServer } from 'smtp-server';
import { gatehouseArgs, median, now, pool } from './common.ts';
import { addUser, gatehouseEnv } from './gatehouse.ts';
import { getCsrf, cookieHeader, type Csrf } from './http.ts';
import { cleanup, freePort, installCleanupHandlers, makeTemp, startServer } from './processes.ts';

const sequentialCount = 200;
const concurrentCount = 2000;
const concurrency = 16;
const knownEmail = 'forgot-bench@example.com';

async function startSmtp(): Promise<{ port: number; received: () => number; close(): void }> {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => {
        received += 1;
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, received: () => received, close: () => server.close() };
}

async function forgot(base: string, csrf: Csrf, email: string): Promise<number> {
  const t0 = now();
  const response = await fetch(`${base}/api/account/password/forgot`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: cookieHeader(csrf.cookies) },
    body: JSON.stringify({ csrfToken: csrf.token, email }),
    signal: AbortSignal.timeout(30_000),
  });
  await response.arrayBuffer();
  if (response.status !== 202) throw new Error(`forgot answered ${response.status}`);
  return now() - t0;
}

async function main(): Promise<void> {
  installCleanupHandlers();
  const smtp = await startSmtp();
  const port = await freePort();
  const env = gatehouseEnv({
    port,
    dataDir: makeTemp('forgot'),
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    MAIL_FROM: 'Gatehouse <no-reply@example.com>',
    THROTTLE_EMAIL_MAX_FAILURES: '1000000',
    THROTTLE_IP_MAX_FAILURES: '1000000',
  });
  addUser(env, { email: knownEmail, password: 'forgot-bench-password-horse' });
  const server = await startServer('gatehouse', gatehouseArgs, env, { cpu: null });
  const csrf = await getCsrf(server.base);
  let unknown = 0;
  const nextEmail = (i: number) =>
    i % 2 === 0 ? knownEmail : `nobody-${(unknown += 1)}@example.com`;

  const sequential: number[] = [];
  let t0 = now();
  for (let i = 0; i < sequentialCount; i += 1)
    sequential.push(await forgot(server.base, csrf, nextEmail(i)));
  const sequentialRate = sequentialCount / ((now() - t0) / 1000);

  const concurrent: number[] = [];
  let i = 0;
  t0 = now();
  await pool(concurrentCount, concurrency, async () => {
    concurrent.push(await forgot(server.base, csrf, nextEmail((i += 1))));
  });
  const concurrentRate = concurrentCount / ((now() - t0) / 1000);

  // The mails for the known address, delivered by the worker (bounded wait).
  const expected = (sequentialCount + concurrentCount) / 2;
  const deadline = now() + 60_000;
  while (smtp.received() < expected && now() < deadline)
    await new Promise((r) => setTimeout(r, 100));

  const p99 = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.99)] ?? NaN;
  process.stdout.write(
    [
      `forgot, one at a time: ${sequentialRate.toFixed(0)} req/s, median ${median(sequential).toFixed(2)} ms, p99 ${p99(sequential).toFixed(2)} ms`,
      `forgot, ${concurrency} at once:  ${concurrentRate.toFixed(0)} req/s, median ${median(concurrent).toFixed(2)} ms, p99 ${p99(concurrent).toFixed(2)} ms`,
      `mails delivered to the loopback SMTP server: ${smtp.received()} of ${expected} (the known address's)`,
      '',
    ].join('\n'),
  );
  smtp.close();
  await cleanup();
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  await cleanup();
  process.exit(1);
});
