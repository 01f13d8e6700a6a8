// Usage: node scripts/containers/checks.mjs IMAGE   (DOCKER_HOST set; called by scripts/containers.sh)
//
// Runs the deployment as an operator would and checks each promise of the Deploy section, each
// as a check that can fail: the image's own HEALTHCHECK, non-root and read-only root, the CLI
// inside the container, the CSRF dance, data across container re-creation, the drain under
// `docker stop`, compose with PostgreSQL (restart, outage, recovery), three replicas on one
// empty PostgreSQL, and the Kubernetes manifests (schema and pod template with its probes).
// Every container runs on the host's network on loopback (the engine has no bridge), on ports
// chosen here; everything started is removed at the end. Prints `N passed, N failed`.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const image = process.argv[2];
if (image === undefined) {
  process.stderr.write('usage: checks.mjs IMAGE\n');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const run = `ghci${process.pid}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-containers-'));
const password = 'correct horse battery staple';
const results = [];
const figures = {};

/** Runs a command; resolves with its output, or rejects with its stderr in the message. */
async function sh(command, args, { input, env, allowFail = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 && !allowFail) {
        reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
      } else resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() });
    });
    child.stdin.end(input ?? '');
  });
}
const docker = (...args) => sh('docker', args);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function check(name, body) {
  const started = Date.now();
  try {
    const detail = await body();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    results.push({ name, ok: true });
    process.stdout.write(`PASS ${name} (${seconds} s)${detail ? `: ${detail}` : ''}\n`);
  } catch (error) {
    results.push({ name, ok: false });
    process.stdout.write(`FAIL ${name}: ${error instanceof Error ? error.message : error}\n`);
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

let nextPort = 20000 + Math.floor(Math.random() * 20000);
const port = () => (nextPort += 1);

/** Waits until `docker inspect` reports the container healthy; returns the seconds taken. */
async function waitHealthy(container, timeoutMs = 90_000) {
  const started = Date.now();
  for (;;) {
    const { stdout } = await sh(
      'docker',
      [
        'inspect',
        '-f',
        '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}',
        container,
      ],
      { allowFail: true },
    );
    if (stdout.endsWith('healthy') && !stdout.endsWith('unhealthy')) {
      return (Date.now() - started) / 1000;
    }
    if (stdout.startsWith('exited') || stdout.endsWith('unhealthy')) {
      const logs = await sh('docker', ['logs', '--tail', '20', container], { allowFail: true });
      throw new Error(`${container} is ${stdout}: ${logs.stdout} ${logs.stderr}`);
    }
    if (Date.now() - started > timeoutMs) throw new Error(`${container} not healthy: ${stdout}`);
    await sleep(250);
  }
}

async function waitStatus(url, status, timeoutMs = 30_000) {
  const started = Date.now();
  let last = 'no answer';
  while (Date.now() - started < timeoutMs) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      last = String(response.status);
      if (response.status === status) return (Date.now() - started) / 1000;
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    await sleep(200);
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${last})`);
}

/** The CSRF dance as an Auth.js client does it; returns the cookie jar and the session cookie. */
async function signIn(base, email) {
  const jar = new Map();
  const store = (response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      if (value === '' || /max-age=0/i.test(line)) jar.delete(pair.slice(0, eq));
      else jar.set(pair.slice(0, eq), value);
    }
  };
  const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  const csrfResponse = await fetch(`${base}/api/auth/csrf`);
  store(csrfResponse);
  const { csrfToken } = await csrfResponse.json();
  const response = await fetch(`${base}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-auth-return-redirect': '1',
      cookie: cookie(),
    },
    body: new URLSearchParams({ csrfToken, email, password }),
  });
  store(response);
  const { url } = await response.json();
  assert(response.status === 200 && !url.includes('error'), `sign-in refused: ${url}`);
  const session = jar.get('authjs.session-token');
  assert(session !== undefined, 'no session cookie after sign-in');
  return { jar, cookie, csrfToken, session, store };
}

async function readSession(base, session) {
  const response = await fetch(`${base}/api/auth/session`, {
    headers: { cookie: `authjs.session-token=${session}` },
  });
  assert(response.status === 200, `session read answered ${response.status}`);
  return response.json();
}

async function signOut(base, signedIn) {
  const response = await fetch(`${base}/api/auth/signout`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-auth-return-redirect': '1',
      cookie: signedIn.cookie(),
    },
    body: new URLSearchParams({ csrfToken: signedIn.csrfToken }),
  });
  assert(response.status === 200, `sign-out answered ${response.status}`);
}

async function addUser(args, email) {
  const { stdout } = await sh(
    'docker',
    [...args, 'users', 'add', '--email', email, '--name', 'Ada', '--password-stdin'],
    { input: `${password}\n` },
  );
  assert(stdout.includes(`added ${email}`), `users add said: ${stdout}`);
}

/** One request on a connection of its own; resolves with its status or the socket error. */
function oneRequest(base, requestPath, init = {}) {
  return new Promise((resolve) => {
    const request = http.request(
      `${base}${requestPath}`,
      { agent: false, method: init.method ?? 'GET', headers: init.headers },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode }));
        response.on('error', (error) => resolve({ error: error.code ?? error.message }));
      },
    );
    request.on('error', (error) => resolve({ error: error.code ?? error.message }));
    request.end(init.body);
  });
}

const cleanups = [];
async function cleanup() {
  for (const step of cleanups.reverse()) {
    try {
      await step();
    } catch {
      // Best effort: the engine itself is stopped by scripts/containers.sh afterwards.
    }
  }
  fs.rmSync(work, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------

const secret = randomBytes(32).toString('base64');
const volume = `${run}-data`;

await check('the image reports its size on top of the base image', async () => {
  const size = async (ref) =>
    Number((await docker('image', 'inspect', '-f', '{{.Size}}', ref)).stdout);
  const baseRef = 'node:24-bookworm-slim';
  const added = ((await size(image)) - (await size(baseRef))) / 1e6;
  figures.imageAddedMb = added.toFixed(1);
  assert(added <= 60, `the image adds ${added.toFixed(1)} MB to ${baseRef}; the budget is 60 MB`);
  return `${added.toFixed(1)} MB on top of ${baseRef}`;
});

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
cleanups.push(() => docker('rm', '-f', single));
cleanups.push(() => docker('volume', 'rm', '-f', volume));

await check(
  'the users CLI runs in the image (docker run IMAGE users add …) on the data volume',
  async () => {
    await docker('volume', 'create', volume);
    await addUser(
      ['run', '--rm', '-i', '--network', 'none', '--read-only', '-v', `${volume}:/data`, image],
      'ada@example.com',
    );
  },
);

await check('the container turns healthy through its own HEALTHCHECK', async () => {
  const started = Date.now();
  await docker(...singleArgs());
  const firstOk = await waitStatus(`${singleBase}/api/health`, 200);
  await waitHealthy(single);
  figures.firstHealthSeconds = firstOk.toFixed(2);
  figures.healthySeconds = ((Date.now() - started) / 1000).toFixed(1);
  return `first 200 after ${firstOk.toFixed(2)} s, healthy after ${figures.healthySeconds} s (the check runs every 10 s)`;
});

await check(
  'it runs as a non-root user with a read-only root file system; /data and /tmp are writable',
  async () => {
    const uid = (await docker('exec', single, 'id', '-u')).stdout;
    assert(uid !== '0' && uid !== '', `runs as uid ${uid}`);
    const rootWrite = await sh('docker', ['exec', single, 'sh', '-c', 'touch /app/x'], {
      allowFail: true,
    });
    assert(
      rootWrite.code !== 0 && /read-only/i.test(rootWrite.stderr),
      `root is writable: ${rootWrite.stderr}`,
    );
    await docker('exec', single, 'sh', '-c', 'touch /data/.w /tmp/.w && rm /data/.w /tmp/.w');
    const cache = await sh(
      'docker',
      ['exec', single, 'sh', '-c', 'ls /app/dist/gatehouse.cjs.v8cache'],
      { allowFail: true },
    );
    assert(cache.code === 0, 'the image has no V8 code cache');
    return `uid ${uid}`;
  },
);

await check('the V8 code cache in the image is accepted by the exact start command', async () => {
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
  assert(stdout === 'false', `V8 rejected the cache under the start flags (${flags})`);
  return `flags: ${flags}`;
});

let survivor;
await check(
  'a user added by the CLI signs in, reads the session and signs out (CSRF dance over HTTP)',
  async () => {
    const signedIn = await signIn(singleBase, 'ada@example.com');
    const body = await readSession(singleBase, signedIn.session);
    assert(body?.user?.email === 'ada@example.com', `session: ${JSON.stringify(body)}`);
    await signOut(singleBase, signedIn);
    assert(
      (await readSession(singleBase, signedIn.session)) === null,
      'a signed-out cookie still reads',
    );
    survivor = (await signIn(singleBase, 'ada@example.com')).session;
  },
);

await check('the data survives removing and recreating the container', async () => {
  await docker('rm', '-f', single);
  await docker(...singleArgs());
  await waitStatus(`${singleBase}/api/health/ready`, 200);
  const body = await readSession(singleBase, survivor);
  assert(
    body?.user?.email === 'ada@example.com',
    `session after re-creation: ${JSON.stringify(body)}`,
  );
  const list = (await docker('exec', single, 'gatehouse', 'users', 'list')).stdout;
  assert(list.includes('ada@example.com'), `users list: ${list}`);
});

await check(
  'docker stop during a stream of requests: every request the service read is answered, exit 0 well inside the grace period',
  async () => {
    // Set up on the running container, then drain a fresh one on the same data: its log then
    // holds only the stream (LOG_LEVEL=debug logs each request as read, and as answered).
    const signedIn = await signIn(singleBase, 'ada@example.com');
    const csrf = await fetch(`${singleBase}/api/auth/csrf`);
    const csrfCookie = csrf.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    const { csrfToken } = await csrf.json();
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
    const tally = { answered: 0, refused: 0, reset: 0, statuses: {} };
    let stopping = false;
    let stopAt = 0;
    const worker = async (kind) => {
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
      .map((line) => JSON.parse(line));
    const streamed = (line) =>
      line.path === '/api/auth/session' || line.path === '/api/auth/callback/credentials';
    const read = lines.filter((line) => line.msg === 'received' && streamed(line)).length;
    const written = lines.filter((line) => line.msg === 'request' && streamed(line)).length;
    figures.drain = { ...tally, read, written, stopSeconds: stopSeconds.toFixed(2), exitCode };
    assert(exitCode === '0', `exit code ${exitCode}`);
    assert(stopSeconds < 15, `docker stop took ${stopSeconds.toFixed(1)} s`);
    assert(read === written, `the service read ${read} requests but answered ${written}`);
    assert(
      tally.answered === written,
      `the service answered ${written} requests, the clients received ${tally.answered}`,
    );
    assert(tally.answered > 50, `only ${tally.answered} requests answered`);
    const failures = Object.keys(tally.statuses).filter((status) => Number(status) >= 500);
    assert(failures.length === 0, `5xx answers: ${JSON.stringify(tally.statuses)}`);
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

// --- compose ---------------------------------------------------------------------------------

const composeDir = path.join(work, 'compose');
const composeProject = `${run}c`;
const composePort = port();
const composePgPort = port();
const composeBase = `http://127.0.0.1:${composePort}`;
const compose = (...args) =>
  sh(
    'docker-compose',
    ['-p', composeProject, '-f', path.join(composeDir, 'compose.yaml'), ...args],
    {
      env: { GATEHOUSE_IMAGE: image, AUTH_URL: composeBase },
    },
  );
cleanups.push(() => compose('down', '-v', '--timeout', '5'));

function writeSecrets(dir, pgPort) {
  fs.mkdirSync(path.join(dir, 'secrets'), { recursive: true });
  const pgPassword = randomBytes(18).toString('hex');
  const files = {
    auth_secret: randomBytes(33).toString('base64'),
    postgres_password: pgPassword,
    database_url: `postgres://gatehouse:${pgPassword}@127.0.0.1:${pgPort}/gatehouse`,
  };
  for (const [name, value] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, 'secrets', name), `${value}\n`, { mode: 0o644 });
  }
}

async function composeContainer(service) {
  return (await compose('ps', '-q', service)).stdout;
}

await check(
  'compose: PostgreSQL and Gatehouse both turn healthy (secrets from files)',
  async () => {
    fs.mkdirSync(composeDir, { recursive: true });
    writeSecrets(composeDir, composePgPort);
    await sh('node', [
      path.join(here, 'compose-host-network.mjs'),
      path.join(root, 'compose.yaml'),
      path.join(composeDir, 'compose.yaml'),
      `postgres=PGPORT=${composePgPort}`,
      'postgres=@command=["postgres","-c","listen_addresses=127.0.0.1"]',
      'gatehouse=HOST=127.0.0.1',
      `gatehouse=PORT=${composePort}`,
    ]);
    const started = Date.now();
    await compose('up', '-d');
    await waitHealthy(await composeContainer('postgres'));
    await waitHealthy(await composeContainer('gatehouse'));
    return `both healthy ${((Date.now() - started) / 1000).toFixed(1)} s after up`;
  },
);

let composeSession;
await check(
  'compose: a user added with `compose exec gatehouse gatehouse users add` signs in',
  async () => {
    await sh(
      'docker-compose',
      [
        '-p',
        composeProject,
        '-f',
        path.join(composeDir, 'compose.yaml'),
        'exec',
        '-T',
        'gatehouse',
        'gatehouse',
        'users',
        'add',
        '--email',
        'grace@example.com',
        '--password-stdin',
      ],
      { input: `${password}\n`, env: { GATEHOUSE_IMAGE: image } },
    );
    composeSession = (await signIn(composeBase, 'grace@example.com')).session;
    const body = await readSession(composeBase, composeSession);
    assert(body?.user?.email === 'grace@example.com', `session: ${JSON.stringify(body)}`);
  },
);

await check('compose: a session made before `restart gatehouse` still reads after it', async () => {
  await compose('restart', 'gatehouse');
  await waitStatus(`${composeBase}/api/health/ready`, 200);
  const body = await readSession(composeBase, composeSession);
  assert(
    body?.user?.email === 'grace@example.com',
    `session after restart: ${JSON.stringify(body)}`,
  );
  const exitCode = (
    await docker(
      'inspect',
      '-f',
      '{{.RestartCount}} {{.State.Status}}',
      await composeContainer('gatehouse'),
    )
  ).stdout;
  return `gatehouse ${exitCode}`;
});

await check(
  'compose: with PostgreSQL stopped, readiness 503 and liveness 200; back, readiness 200',
  async () => {
    await compose('stop', 'postgres');
    const down = await waitStatus(`${composeBase}/api/health/ready`, 503, 10_000);
    const live = await fetch(`${composeBase}/api/health`);
    assert(live.status === 200, `liveness answered ${live.status} while PostgreSQL was down`);
    await compose('start', 'postgres');
    const back = await waitStatus(`${composeBase}/api/health/ready`, 200, 60_000);
    const body = await readSession(composeBase, composeSession);
    assert(
      body?.user?.email === 'grace@example.com',
      'the session did not read after PostgreSQL came back',
    );
    return `503 after ${down.toFixed(1)} s, 200 again ${back.toFixed(1)} s after start`;
  },
);

// --- three replicas on one empty PostgreSQL --------------------------------------------------

const pg = `${run}-pg`;
const pgPort = port();
const pgPassword = randomBytes(18).toString('hex');
const pgUrl = `postgres://gatehouse:${pgPassword}@127.0.0.1:${pgPort}/gatehouse`;
cleanups.push(() => docker('rm', '-f', pg));

await check(
  'three Gatehouse containers started at once on an empty PostgreSQL all turn healthy, one schema',
  async () => {
    await docker(
      'run',
      '-d',
      '--name',
      pg,
      '--network',
      'host',
      '-e',
      `PGPORT=${pgPort}`,
      '-e',
      'POSTGRES_USER=gatehouse',
      '-e',
      `POSTGRES_PASSWORD=${pgPassword}`,
      'postgres:17',
      'postgres',
      '-c',
      'listen_addresses=127.0.0.1',
    );
    for (let i = 0; ; i += 1) {
      const ready = await sh(
        'docker',
        ['exec', pg, 'pg_isready', '-q', '-h', '127.0.0.1', '-U', 'gatehouse'],
        { allowFail: true },
      );
      if (ready.code === 0) break;
      assert(i < 120, 'PostgreSQL did not start');
      await sleep(250);
    }
    const names = [1, 2, 3].map((i) => `${run}-replica${i}`);
    for (const name of names) cleanups.push(() => docker('rm', '-f', name));
    const ports = names.map(() => port());
    const started = Date.now();
    await Promise.all(
      names.map((name, i) =>
        docker(
          'run',
          '-d',
          '--name',
          name,
          '--network',
          'host',
          '--read-only',
          '--tmpfs',
          '/tmp',
          '--health-interval',
          '2s',
          '-e',
          `PORT=${ports[i]}`,
          '-e',
          'HOST=127.0.0.1',
          '-e',
          `AUTH_SECRET=${secret}`,
          '-e',
          `DATABASE_URL=${pgUrl}`,
          '-e',
          `AUTH_URL=http://127.0.0.1:${ports[i]}`,
          image,
        ),
      ),
    );
    await Promise.all(names.map((name) => waitHealthy(name)));
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const restarts = await Promise.all(
      names.map(
        async (name) =>
          (await docker('inspect', '-f', '{{.State.Status}}/{{.RestartCount}}', name)).stdout,
      ),
    );
    assert(
      restarts.every((state) => state === 'running/0'),
      `states: ${restarts}`,
    );
    const applied = (
      await docker(
        'exec',
        pg,
        'psql',
        '-qtA',
        '-U',
        'gatehouse',
        '-d',
        'gatehouse',
        '-c',
        'select name from kysely_migration',
      )
    ).stdout;
    assert(applied === '001-initial', `migrations recorded: ${JSON.stringify(applied)}`);
    for (const name of names) await docker('rm', '-f', name);
    figures.replicas = `3 of 3 healthy in ${seconds} s, one schema`;
    return figures.replicas;
  },
);

// --- Kubernetes ------------------------------------------------------------------------------

await check(
  'Kubernetes manifests are valid against the official schemas, and a misspelled field is rejected',
  async () => {
    const { stdout } = await sh('node', [path.join(here, 'k8s-validate.mjs'), '--self-test']);
    return `\n${stdout.replace(/^/gm, '    ')}`;
  },
);

await check(
  "the Deployment's pod template passes its startup, liveness and readiness probes under Docker",
  async () => {
    const { stdout } = await sh('node', [
      path.join(here, 'k8s-pod.mjs'),
      '--image',
      image,
      '--port',
      String(port()),
      '--name',
      `${run}-pod`,
      '--env',
      `DATABASE_URL=${pgUrl}`,
      '--env',
      `AUTH_SECRET=${secret}`,
      '--env',
      'AUTH_URL=http://127.0.0.1',
    ]);
    return stdout.split('\n').slice(-3).join(' | ');
  },
);

await cleanup();
const failed = results.filter((result) => !result.ok).length;
process.stdout.write(`\nfigures: ${JSON.stringify(figures)}\n`);
process.stdout.write(`containers: ${results.length - failed} passed, ${failed} failed\n`);
process.exitCode = failed === 0 ? 0 : 1;
