import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

/** The header names of one GET, in the order they came, without Node's own `date`. */
function headerOrder(
  server: TestServer,
  target: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; names: string[] }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: hostname, port, path: target, headers, agent: false },
      (response) => {
        response.resume();
        const names = response.rawHeaders
          .filter((_part, i) => i % 2 === 0)
          .map((name) => name.toLowerCase())
          .filter((name) => name !== 'date' && name !== 'keep-alive');
        response.on('end', () => resolve({ status: response.statusCode ?? 0, names }));
      },
    );
    request.on('error', reject);
  });
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const at = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(at) : at.endsWith('.ts') ? [at] : [];
  });
}

describe('what every answer carries is decided in one place', () => {
  it("the store's 503 with Retry-After is written once, in src/http/answer.ts", () => {
    const writers = sourceFiles('src')
      .filter((file) => fs.readFileSync(file, 'utf8').includes(`'retry-after': '5'`))
      .map((file) => file.split(path.sep).join('/'));
    expect(writers).toEqual(['src/http/answer.ts']);
  });
});

describe.each([
  ['http', undefined],
  ['https behind AUTH_URL', 'https://auth.example.com'],
])(
  'answers written in front of Fastify list their headers as Fastify does (%s)',
  (_name, authUrl) => {
    let fast: TestServer;
    let plain: TestServer;
    let draining = false;
    beforeAll(async () => {
      fast = await startServer({
        config: { fastPaths: true, authUrl },
        isDraining: () => draining,
      });
      plain = await startServer({
        config: { fastPaths: false, authUrl },
        isDraining: () => draining,
      });
    });
    afterAll(async () => {
      await fast.close();
      await plain.close();
    });

    it('the health probe, and while draining', async () => {
      expect(await headerOrder(fast, '/api/health')).toEqual(
        await headerOrder(plain, '/api/health'),
      );
      draining = true;
      const [a, b] = [
        await headerOrder(fast, '/api/health'),
        await headerOrder(plain, '/api/health'),
      ];
      draining = false;
      expect(a).toEqual(b);
      expect(a.names.slice(-2)).toEqual(['connection', 'content-length']);
    });
  },
);

describe('the request budget refuses with the head Fastify gives its own 429', () => {
  let door: TestServer;
  let hook: TestServer;
  beforeAll(async () => {
    // The clock stands still: no token comes back during the test.
    const now = () => 1_800_000_000_000;
    const requestBudget = { perSecond: 1, burst: 4 };
    door = await startServer({ config: { requestBudget }, now });
    hook = await startServer({ config: { requestBudget, trustProxy: ['127.0.0.1'] }, now });
  });
  afterAll(async () => {
    await door.close();
    await hook.close();
  });

  it('in the front door as in the hook behind a proxy', async () => {
    const refusal = async (server: TestServer, headers: Record<string, string> = {}) => {
      for (;;) {
        const answer = await headerOrder(server, '/nothing-here', headers);
        if (answer.status === 429) return answer;
      }
    };
    const inFront = await refusal(door);
    const behind = await refusal(hook, { 'x-forwarded-for': '203.0.113.9' });
    expect(inFront).toEqual(behind);
    expect(inFront.names.slice(0, 2)).toEqual(['retry-after', 'content-type']);
  });
});
