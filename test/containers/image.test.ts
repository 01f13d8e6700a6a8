// The image on its own, run as an operator would: its size, the CLI inside it, its own
// HEALTHCHECK, non-root with a read-only root, the V8 code cache, the CSRF dance, data across
// container re-creation, and the drain under `docker stop`.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, expect } from 'vitest';
import {
  check,
  cleanups,
  docker,
  emailOf,
  image,
  password,
  port,
  readSession,
  run,
  sh,
  signIn,
  sleep,
  waitHealthy,
  waitStatus,
} from './containers.ts';

const secret = randomBytes(32).toString('base64');
const volume = `${run}-data`;
const single = `${run}-single`;
const singlePort = port();
const singleBase = `http://127.0.0.1:${singlePort}`;
const singleArgs = () => [
  'run',
  '-d',
  '--name',
  single,
  '--network',
  'host',
  '--read-only',
  '--tmpfs',
  '/tmp',
  '-v',
  `${volume}:/data`,
  '-e',
  `PORT=${singlePort}`,
  '-e',
  'HOST=127.0.0.1',
  '-e',
  `AUTH_SECRET=${secret}`,
  '-e',
  `AUTH_URL=${singleBase}`,
  image,
];
const started = cleanups();
started.add(() => docker('rm', '-f', single));
started.add(() => docker('volume', 'rm', '-f', volume));
afterAll(() => started.run(), 120_000);

async function addUser(args: string[], email: string): Promise<void> {
  const { stdout } = await sh(
    'docker',
    [...args, 'users', 'add', '--email', email, '--name', 'Ada', '--password-stdin'],
    { input: `${password}\n` },
  );
  expect(stdout, `users add said: ${stdout}`).toContain(`added ${email}`);
}

/** One request on a connection of its own; resolves with its status or the socket error. */
function oneRequest(
  base: string,
  requestPath: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status?: number; error?: string }> {
  return new Promise((resolve) => {
    const request = http.request(
      `${base}${requestPath}`,
      { agent: false, method: init.method ?? 'GET', headers: init.headers },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode }));
        response.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ error: error.code ?? error.message }),
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.code ?? error.message }),
    );
    request.end(init.body);
  });
}

check('the image reports its size on top of the base image', async (figures) => {
  const size = async (ref: string) =>
    Number((await docker('image', 'inspect', '-f', '{{.Size}}', ref)).stdout);
  const baseRef = 'node:24-bookworm-slim';
  const added = ((await size(image)) - (await size(baseRef))) / 1e6;
  figures({ imageAddedMb: added.toFixed(1) });
  expect(
    added,
    `the image adds ${added.toFixed(1)} MB to ${baseRef}; the budget is 60 MB`,
  ).toBeLessThanOrEqual(60);
  return `${added.toFixed(1)} MB on top of ${baseRef}`;
});

check(
  'the users CLI runs in the image (docker run IMAGE users add …) on the data volume',
  async () => {
    await docker('volume', 'create', volume);
    await addUser(
      ['run', '--rm', '-i', '--network', 'none', '--read-only', '-v', `${volume}:/data`, image],
      'ada@example.com',
    );
  },
);

check('the container turns healthy through its own HEALTHCHECK', async (figures) => {
  const started = Date.now();
  await docker(...singleArgs());
  const firstOk = await waitStatus(`${singleBase}/api/health`, 200);
  await waitHealthy(single);
  const healthySeconds = ((Date.now() - started) / 1000).toFixed(1);
  figures({ firstHealthSeconds: firstOk.toFixed(2), healthySeconds });
  return `first 200 after ${firstOk.toFixed(2)} s, healthy after ${healthySeconds} s (the check runs every 10 s)`;
});

check(
  'it runs as a non-root user with a read-only root file system; /data and /tmp are writable',
  async () => {
    const uid = (await docker('exec', single, 'id', '-u')).stdout;
    expect(uid !== '0' && uid !== '', `runs as uid ${uid}`).toBe(true);
    const rootWrite = await sh('docker', ['exec', single, 'sh', '-c', 'touch /app/x'], {
      allowFail: true,
    });
    expect(
      rootWrite.code !== 0 && /read-only/i.test(rootWrite.stderr),
      `root is writable: ${rootWrite.stderr}`,
    ).toBe(true);
    await docker('exec', single, 'sh', '-c', 'touch /data/.w /tmp/.w && rm /data/.w /tmp/.w');
    const cache = await sh(
      'docker',
      ['exec', single, 'sh', '-c', 'ls /app/dist/gatehouse.cjs.v8cache'],
      { allowFail: true },
    );
    expect(cache.code, 'the image has no V8 code cache').toBe(0);
    return `uid ${uid}`;
  },
);

check('the V8 code cache in the image is accepted by the exact start command', async () => {
  const probe = `const fs=require('fs'),vm=require('vm');const b='/app/dist/gatehouse.cjs';
    const s=new vm.Script('(function (exports, require, module, __filename, __dirname) {'+fs.readFileSync(b,'utf8')+'\\n})',{filename:b,cachedData:fs.readFileSync(b+'.v8cache')});
    process.stdout.write(String(s.cachedDataRejected))`;
  const flags = (
    await docker(
      'exec',
      single,
      'sh',
      '-c',
      'sed -n \'s/.*exec node \\(--[^"]*\\) "$here\\/gatehouse.mjs".*/\\1/p\' /app/dist/gatehouse',
    )
  ).stdout;
  const { stdout } = await docker(
    'exec',
    single,
    'node',
    ...flags.split(' ').filter(Boolean),
    '-e',
    probe,
  );
  expect(stdout, `V8 rejected the cache under the start flags (${flags})`).toBe('false');
  return `flags: ${flags}`;
});

let survivor: string | undefined;
check(
  'a user added by the CLI signs in, reads the session and signs out (CSRF dance over HTTP)',
  async () => {
    const signedIn = await signIn(singleBase, 'ada@example.com');
    const body = await readSession(singleBase, signedIn.session);
    expect(emailOf(body), `session: ${JSON.stringify(body)}`).toBe('ada@example.com');
    const signOut = await signedIn.client.signOut();
    expect(signOut.status, `sign-out answered ${signOut.status}`).toBe(200);
    expect(
      await readSession(singleBase, signedIn.session),
      'a signed-out cookie still reads',
    ).toBeNull();
    survivor = (await signIn(singleBase, 'ada@example.com')).session;
  },
);

check('the data survives removing and recreating the container', async () => {
  await docker('rm', '-f', single);
  await docker(...singleArgs());
  await waitStatus(`${singleBase}/api/health/ready`, 200);
  const body = await readSession(singleBase, survivor);
  expect(emailOf(body), `session after re-creation: ${JSON.stringify(body)}`).toBe(
    'ada@example.com',
  );
  const list = (await docker('exec', single, 'gatehouse', 'users', 'list')).stdout;
  expect(list, `users list: ${list}`).toContain('ada@example.com');
});

check(
  'docker stop during a stream of requests: every request the service read is answered, exit 0 well inside the grace period',
  async (figures) => {
    // Set up on the running container, then drain a fresh one on the same data: its log then
    // holds only the stream (LOG_LEVEL=debug logs each request as read, and as answered).
    const signedIn = await signIn(singleBase, 'ada@example.com');
    const csrf = await fetch(`${singleBase}/api/auth/csrf`);
    const csrfCookie = csrf.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    await docker('rm', '-f', single);
    const drainArgs = singleArgs();
    drainArgs.splice(drainArgs.indexOf(image), 0, '-e', 'LOG_LEVEL=debug');
    await docker(...drainArgs);
    await waitStatus(`${singleBase}/api/health`, 200);
    const signInBody = new URLSearchParams({
      csrfToken,
      email: 'ada@example.com',
      password,
    }).toString();
    const tally: {
      answered: number;
      refused: number;
      reset: number;
      statuses: Record<string, number>;
      lastError?: string;
    } = { answered: 0, refused: 0, reset: 0, statuses: {} };
    let stopping = false;
    let stopAt = 0;
    const worker = async (kind: 'signin' | 'session') => {
      while (!stopping || Date.now() - stopAt < 3000) {
        const outcome =
          kind === 'signin'
            ? await oneRequest(singleBase, '/api/auth/callback/credentials', {
                method: 'POST',
                headers: {
                  'content-type': 'application/x-www-form-urlencoded',
                  'x-auth-return-redirect': '1',
                  cookie: csrfCookie,
                },
                body: signInBody,
              })
            : await oneRequest(singleBase, '/api/auth/session', {
                headers: { cookie: `authjs.session-token=${signedIn.session}` },
              });
        if (outcome.status !== undefined) {
          tally.answered += 1;
          tally.statuses[outcome.status] = (tally.statuses[outcome.status] ?? 0) + 1;
        } else if (outcome.error === 'ECONNREFUSED') {
          tally.refused += 1;
          await sleep(20);
        } else {
          tally.reset += 1;
          tally.lastError = outcome.error;
        }
      }
    };
    const workers = [
      ...Array.from({ length: 6 }, () => worker('session')),
      ...Array.from({ length: 4 }, () => worker('signin')),
    ];
    await sleep(1500);
    stopping = true;
    stopAt = Date.now();
    await docker('stop', '--time', '30', single);
    const stopSeconds = (Date.now() - stopAt) / 1000;
    await Promise.all(workers);
    const exitCode = (await docker('inspect', '-f', '{{.State.ExitCode}}', single)).stdout;
    const logs = await docker('logs', single);
    const lines = `${logs.stdout}\n${logs.stderr}`
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; path?: string });
    const streamed = (line: { path?: string }) =>
      line.path === '/api/auth/session' || line.path === '/api/auth/callback/credentials';
    const read = lines.filter((line) => line.msg === 'received' && streamed(line)).length;
    const written = lines.filter((line) => line.msg === 'request' && streamed(line)).length;
    figures({ drain: { ...tally, read, written, stopSeconds: stopSeconds.toFixed(2), exitCode } });
    expect(exitCode, `exit code ${exitCode}`).toBe('0');
    expect(stopSeconds, `docker stop took ${stopSeconds.toFixed(1)} s`).toBeLessThan(15);
    expect(read, `the service read ${read} requests but answered ${written}`).toBe(written);
    expect(
      tally.answered,
      `the service answered ${written} requests, the clients received ${tally.answered}`,
    ).toBe(written);
    expect(tally.answered, `only ${tally.answered} requests answered`).toBeGreaterThan(50);
    const failures = Object.keys(tally.statuses).filter((status) => Number(status) >= 500);
    expect(failures, `5xx answers: ${JSON.stringify(tally.statuses)}`).toEqual([]);
    // A connection still in the kernel's accept queue when the listener closes is reset by
    // the kernel: the service never read it (read === written above), so a client or proxy
    // may resend it. In Kubernetes the preStop pause keeps traffic away before SIGTERM.
    return (
      `${tally.answered} read and answered (${JSON.stringify(tally.statuses)}), ${tally.refused} refused ` +
      `after the listener closed, ${tally.reset} reset in the kernel's accept queue before being read; ` +
      `stopped in ${stopSeconds.toFixed(2)} s, exit 0`
    );
  },
);
