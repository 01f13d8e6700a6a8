// wrk as the load generator: its command line, its output parsed, and one endpoint measured
// (answer checked first, warmed up, then run, with every sign of a failing server refused).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BenchError, log, warnings, type Durations } from './common.ts';
import { request } from './http.ts';
import { cpuSeconds } from './machine.ts';
import { pinned, setup, track, type Server } from './processes.ts';

export const wrkConnections = 32;

const unitMs: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** The figures of wrk's `--latency` report; latencies in milliseconds. */
export interface WrkResult {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
  /** wrk's "Socket errors: …" line, when it printed one. */
  socketDetail: string | undefined;
  /** With `measure`'s `cpu`: each pid group's CPU seconds during the measured run. */
  cpuS?: Record<string, number>;
}

/** An endpoint to load: its path, the cookie(s) sent with it, and what a right answer is. */
export interface Endpoint {
  key: string;
  name: string;
  path: string;
  cookie?: string;
  /** Several sessions' cookies, one per request in turn (`cookie` is the first). */
  cookies?: string[];
  /** A POST's body (`application/x-www-form-urlencoded`); GET when absent. */
  form?: string;
  /** Other request headers (printable ASCII), e.g. `authorization`. */
  headers?: Record<string, string>;
  valid: (body: string) => boolean;
}

/** The request the endpoint sends, as fetch takes it: the check before the load. */
function requestInit(endpoint: Endpoint, cookie = endpoint.cookie): RequestInit {
  return {
    ...(endpoint.form !== undefined && { method: 'POST', body: endpoint.form }),
    headers: {
      ...endpoint.headers,
      ...(endpoint.form !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
      ...(cookie !== undefined && { cookie }),
    },
  };
}

/** wrk's Lua for the endpoint's method, body and headers (not its cookies), or ''. */
function requestLua(endpoint: Endpoint): string {
  const lines: string[] = [];
  if (endpoint.form !== undefined)
    lines.push(
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(endpoint.form)}`,
      'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"',
    );
  for (const [name, value] of Object.entries(endpoint.headers ?? {}))
    lines.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** Named groups of pids whose CPU time a measured run reports (read after the warm-up). */
export type CpuGroups = () => Promise<Record<string, number[]>>;

export function parseWrk(text: string): WrkResult {
  const latency = (pct: number): number => {
    const match = new RegExp(`^\\s*${pct}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(text);
    return match ? Number(match[1]) * unitMs[match[2]] : NaN;
  };
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN),
    p50: latency(50),
    p90: latency(90),
    p99: latency(99),
    requests: Number(/(\d+) requests in/.exec(text)?.[1] ?? 0),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0),
    socketErrors: socket
      ? socket
          .slice(1)
          .map(Number)
          .reduce((a, b) => a + b, 0)
      : 0,
    socketDetail: socket?.[0],
  };
}

function wrkArgs(seconds: number, url: string, script?: string): string[] {
  return [
    '-t1',
    `-c${wrkConnections}`,
    `-d${seconds}s`,
    '--latency',
    '--timeout',
    '5s',
    ...(script ? ['-s', script] : []),
    url,
  ];
}

/** The wrk command line as the report prints it. */
export function wrkLine(seconds: number): string {
  const prefix = setup.loadCpu === undefined ? [] : ['taskset', '-c', String(setup.loadCpu)];
  return [...prefix, 'wrk', ...wrkArgs(seconds, 'http://127.0.0.1:<port>/api/...')].join(' ');
}

function runWrk(seconds: number, url: string, script: string | undefined): Promise<string> {
  const [command, args] = pinned(setup.loadCpu, 'wrk', wrkArgs(seconds, url, script));
  return new Promise((resolve, reject) => {
    const child = track(spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // wrk stops itself at -d; this only guards against a hung server holding it open.
    const guard = setTimeout(() => child.kill('SIGKILL'), (seconds + 20) * 1000);
    void child.exited.then(({ code }) => {
      clearTimeout(guard);
      if (code !== 0) reject(new BenchError(`wrk exited with ${code}:\n${out}`));
      else resolve(out);
    });
  });
}

/**
 * Endpoint under load: checked once for the right answer, warmed up, then measured. With
 * `cpu`, a function giving named groups of pids read after the warm-up, the result also holds
 * each group's CPU seconds during the measured run (`cpuS`).
 */
export async function measure(
  server: Server,
  endpoint: Endpoint,
  durations: Durations,
  tmp: string,
  { cpu }: { cpu?: CpuGroups | undefined } = {},
): Promise<WrkResult> {
  const url = `${server.base}${endpoint.path}`;
  const { response, body } = await request(url, requestInit(endpoint));
  if (response.status !== 200 || !endpoint.valid(body)) {
    throw new BenchError(
      `${server.label} ${endpoint.name}: unexpected answer ${response.status} ${body.slice(0, 300)}`,
    );
  }
  // Every session of a set must read as the account, asked all at once (as the load will).
  if (endpoint.cookies) {
    const answers = await Promise.all(
      endpoint.cookies.map((cookie) => request(url, requestInit(endpoint, cookie))),
    );
    const wrong = answers.filter((a) => a.response.status !== 200 || !endpoint.valid(a.body));
    if (wrong.length > 0) {
      throw new BenchError(
        `${server.label} ${endpoint.name}: ${wrong.length} of ${answers.length} sessions read wrong: ${wrong[0].body.slice(0, 200)}`,
      );
    }
  }
  let script: string | undefined;
  const cookies = endpoint.cookies ?? (endpoint.cookie ? [endpoint.cookie] : []);
  const lua = requestLua(endpoint);
  const sent = [...cookies, ...Object.values(endpoint.headers ?? {}), endpoint.form ?? ''];
  if (!sent.every((value) => /^[\x20-\x7e]*$/.test(value)))
    throw new BenchError('a cookie, header or body is not printable ASCII');
  if (lua !== '' && cookies.length === 0) {
    script = path.join(tmp, `${endpoint.key}.lua`);
    fs.writeFileSync(script, lua);
  }
  if (cookies.length > 0) {
    script = path.join(tmp, `${endpoint.key}.lua`);
    // A JSON string literal is a valid Lua string literal for printable ASCII. Several cookies
    // (several sessions) are sent in turn, one per request.
    fs.writeFileSync(
      script,
      lua +
        (cookies.length === 1
          ? `wrk.headers["Cookie"] = ${JSON.stringify(cookies[0])}\n`
          : [
              `local cookies = { ${cookies.map((cookie) => JSON.stringify(cookie)).join(', ')} }`,
              'local i = 0',
              'request = function()',
              '  i = i + 1',
              '  local headers = {}',
              '  for name, value in pairs(wrk.headers) do headers[name] = value end',
              '  headers["Cookie"] = cookies[(i % #cookies) + 1]',
              '  return wrk.format(nil, nil, headers)',
              'end',
              '',
            ].join('\n')),
    );
  }
  log(
    `${server.label}: ${endpoint.name} (warm-up ${durations.warmup}s, then ${durations.seconds}s)`,
  );
  if (durations.warmup > 0) await runWrk(durations.warmup, url, script);
  const groups: Record<string, number[]> = cpu ? await cpu() : {};
  const cpuBefore = Object.fromEntries(
    Object.entries(groups).map(([name, pids]) => [name, cpuSeconds(pids)]),
  );
  const result = parseWrk(await runWrk(durations.seconds, url, script));
  if (cpu) {
    result.cpuS = Object.fromEntries(
      Object.entries(groups).map(([name, pids]) => [name, cpuSeconds(pids) - cpuBefore[name]]),
    );
  }
  if (
    !Number.isFinite(result.rps) ||
    !Number.isFinite(result.p50) ||
    !Number.isFinite(result.p99)
  ) {
    throw new BenchError(`${server.label} ${endpoint.name}: could not read wrk's output`);
  }
  if (result.non2xx > 0) {
    const after = await request(url, requestInit(endpoint));
    throw new BenchError(
      `${server.label} ${endpoint.name}: ${result.non2xx} of ${result.requests} answers were not 2xx/3xx (now answers ${after.response.status})`,
    );
  }
  if (server.child.exitCode !== null || server.child.signalCode !== null) {
    throw new BenchError(
      `${server.label} died during ${endpoint.name} (${server.child.signalCode ?? `exit ${server.child.exitCode}`}):\n${server.output()}`,
    );
  }
  if (result.socketErrors > 0) {
    // A few read errors at wrk's shutdown are normal; refused connections or many errors mean
    // the figures describe a failing server.
    const connect = Number(/connect (\d+)/.exec(result.socketDetail ?? '')?.[1]);
    if (connect > 0 || result.socketErrors > result.requests * 0.01) {
      throw new BenchError(
        `${server.label} ${endpoint.name}: wrk ${result.socketDetail} in ${result.requests} requests`,
      );
    }
    warnings.push(`${server.label} ${endpoint.name}: wrk ${result.socketDetail}`);
  }
  return result;
}
