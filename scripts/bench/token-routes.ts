// Tokens for other backends as users run them (issue 39): `GET /api/auth/token` for a browser's
// cookie jar, the key set (`/api/auth/jwks.json`) and introspection of a live session's token,
// each on Gatehouse started with `npm start`'s command, in production, at the default log level
// with its output to a file, beside the bare node:http floor in the same rounds: req/s, its
// ratio to the floor, and the server's CPU per request.
import fs from 'node:fs';
import path from 'node:path';
import { gatehouseArgs, log, median, type Durations, type Env } from './common.ts';
import { addUser, benchEnv, randomSecret, sqliteUrl } from './gatehouse.ts';
import { healthEndpoint, startBaseline } from './health.ts';
import { request, signIn } from './http.ts';
import { makeTemp, stopChild } from './processes.ts';
import { cpuPerRequest } from './rounds.ts';
import { browserCookie } from './session-read.ts';
import { startTimed, type TimedServer } from './startup.ts';
import { measure, type Endpoint, type WrkResult } from './wrk.ts';

export const tokenRounds = 3;
/** The introspection credential of the bench's INTROSPECTION_TOKEN_FILE. */
const credential = 'bench-introspection-0123456789abcdef0123456789';

export interface TokenRow {
  label: string;
  rps: number;
  ratio: number;
  p50: number;
  p99: number;
  cpuUs: number;
}

interface Side {
  label: string;
  server: TimedServer;
  endpoint: Endpoint;
  results: WrkResult[];
}

const isJson = (body: string, check: (value: Record<string, unknown>) => boolean) =>
  check(JSON.parse(body) as Record<string, unknown>);

async function startGatehouse(
  dir: string,
): Promise<{ server: TimedServer; endpoints: Endpoint[] }> {
  const dataDir = path.join(dir, 'tokens');
  fs.mkdirSync(dataDir);
  const tokenFile = path.join(dir, 'introspection-tokens');
  fs.writeFileSync(tokenFile, `bench:${credential}\n`);
  addUser(
    { DATABASE_URL: sqliteUrl(dataDir), DATA_DIR: dataDir },
    { email: 'bench@example.com', password: 'bench-password-correct-horse', name: 'Bench' },
  );
  const secret = randomSecret();
  const env = (port: number) => {
    const env: Env = {
      ...benchEnv({ port, dataDir, secret, fastPaths: true }),
      INTROSPECTION_TOKEN_FILE: tokenFile,
    };
    // The default log level, as users run it.
    delete env.LOG_LEVEL;
    return env;
  };
  const fd = fs.openSync(path.join(dir, 'tokens.log'), 'a');
  log('tokens as run: start-up');
  try {
    const server = await startTimed('tokens', gatehouseArgs, env, { stdio: ['ignore', fd, fd] });
    const cookie = browserCookie(await signIn(server.base));
    const minted = await request(`${server.base}/api/auth/token`, { headers: { cookie } });
    const { token } = JSON.parse(minted.body) as { token: string };
    const endpoints: Endpoint[] = [
      {
        key: 'token',
        name: 'GET /api/auth/token (cookie jar)',
        path: '/api/auth/token',
        cookie,
        valid: (body) => isJson(body, (v) => typeof v.token === 'string'),
      },
      {
        key: 'jwks',
        name: 'GET /api/auth/jwks.json',
        path: '/api/auth/jwks.json',
        valid: (body) => isJson(body, (v) => Array.isArray(v.keys) && v.keys.length > 0),
      },
      {
        key: 'introspect',
        name: 'POST /api/auth/introspect (a live session’s token)',
        path: '/api/auth/introspect',
        form: new URLSearchParams({ token }).toString(),
        headers: { Authorization: `Bearer ${credential}` },
        valid: (body) => isJson(body, (v) => v.active === true),
      },
    ];
    return { server, endpoints };
  } finally {
    fs.closeSync(fd);
  }
}

function row(side: Side, baseline: WrkResult[]): TokenRow {
  const sorted = [...side.results].sort((a, b) => a.rps - b.rps);
  const mid = sorted[(sorted.length - 1) >> 1] as WrkResult;
  return {
    label: side.endpoint.name,
    rps: mid.rps,
    ratio: median(side.results.map((r, i) => r.rps / (baseline[i] as WrkResult).rps)),
    p50: mid.p50,
    p99: mid.p99,
    cpuUs: cpuPerRequest(side.results)?.server ?? NaN,
  };
}

/** `rounds` rounds of the floor's health and each token route, the order rotated by round. */
export async function benchTokens(
  durations: Durations,
  rounds = tokenRounds,
): Promise<{ baseline: TokenRow; rows: TokenRow[] }> {
  const dir = makeTemp('tokens');
  const baselineServer = await startBaseline();
  const { server, endpoints } = await startGatehouse(dir);
  const sides: Side[] = [
    { label: 'bare', server: baselineServer, endpoint: healthEndpoint, results: [] },
    ...endpoints.map((endpoint) => ({ label: endpoint.name, server, endpoint, results: [] })),
  ];
  try {
    for (let round = 0; round < rounds; round += 1) {
      const these = round === 0 ? durations : { ...durations, warmup: 0 };
      for (const [i] of sides.entries()) {
        const side = sides[(i + round) % sides.length] as Side;
        const pid = side.server.pid;
        side.results.push(
          await measure(side.server, side.endpoint, these, dir, {
            cpu: () => Promise.resolve({ server: [pid] }),
          }),
        );
      }
    }
  } finally {
    await stopChild(server.child);
    await stopChild(baselineServer.child);
  }
  const [base, ...rest] = sides as [Side, ...Side[]];
  return {
    baseline: { ...row(base, base.results), label: 'bare node:http (health)' },
    rows: rest.map((side) => row(side, base.results)),
  };
}

const int = (v: number): string =>
  Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—';

export function tokensReport(result: { baseline: TokenRow; rows: TokenRow[] }): string {
  const line = (r: TokenRow) =>
    `| ${r.label} | ${int(r.rps)} | ${r.ratio.toFixed(2)}× | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpuUs.toFixed(1)} |`;
  return [
    '| tokens as users run them (`npm start`, production, log to a file) | req/s | ratio to bare | p50 ms | p99 ms | server CPU µs/req |',
    '| --- | --: | --: | --: | --: | --: |',
    line(result.baseline),
    ...result.rows.map(line),
    '',
    `- ${tokenRounds} rounds per route beside the floor, the order rotated each round; the median round's req/s and latency, CPU over every measured run divided by the requests. The token route signs an ES256 JWT per request; introspection verifies one and reads its session's row.`,
    '',
  ].join('\n');
}
