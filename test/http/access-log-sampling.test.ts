import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

interface AccessLine {
  msg: string;
  method: string;
  path: string;
  status: number;
}

/** The access lines written since `from` (an index into the server's log). */
function accessLines(server: TestServer, from: number): AccessLine[] {
  return server.logs
    .slice(from)
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as AccessLine)
    .filter((line) => line.msg === 'request');
}

let markers = 0;

/**
 * The access lines written since `from`, once every request answered so far has had its line
 * written: a line is written once its answer has gone out, so a later request whose line is
 * always written (an unknown path's 404) marks the end. A line still missing then is missing,
 * not late, however slow the machine.
 */
async function linesUntilNow(server: TestServer, from: number): Promise<AccessLine[]> {
  markers += 1;
  const marker = `/api/marker-${markers}`;
  await (await fetch(`${server.url}${marker}`)).arrayBuffer();
  await expect
    .poll(() => accessLines(server, from).some((line) => line.path === marker), { timeout: 10_000 })
    .toBe(true);
  return accessLines(server, from).filter((line) => line.path !== marker);
}

async function logged(server: TestServer, path: string, init?: RequestInit) {
  const from = server.logs.length;
  const response = await fetch(`${server.url}${path}`, init);
  await response.arrayBuffer();
  return { status: response.status, lines: await linesUntilNow(server, from) };
}

describe('LOG_SUCCESS_SAMPLE=0: no line for a successful read, every other still written', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: { logSuccessSample: 0 } });
  });
  afterAll(() => server.close());

  it.each(['/api/auth/session', '/api/auth/csrf', '/api/auth/session?x', '/api/auth/providers'])(
    'GET %s answered 200 writes no access line',
    async (path) => {
      const { status, lines } = await logged(server, path);
      expect(status).toBe(200);
      expect(lines).toEqual([]);
    },
  );

  it('a HEAD answered 200 writes none either', async () => {
    const { status, lines } = await logged(server, '/api/auth/providers', { method: 'HEAD' });
    expect(status).toBe(200);
    expect(lines).toEqual([]);
  });

  it('an error answer to a GET is written', async () => {
    const { status, lines } = await logged(server, '/api/nothing-here');
    expect(status).toBe(404);
    expect(lines).toMatchObject([{ method: 'GET', path: '/api/nothing-here', status: 404 }]);
  });

  it('a write is written whatever its answer', async () => {
    const { status, lines } = await logged(server, '/api/auth/signout', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrfToken=nothing',
      redirect: 'manual',
    });
    expect(lines).toMatchObject([{ method: 'POST', path: '/api/auth/signout', status }]);
  });
});

describe('LOG_SUCCESS_SAMPLE unset: every line', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it.each(['/api/auth/session', '/api/auth/session?x'])(
    'GET %s answered 200 writes its access line',
    async (path) => {
      const { status, lines } = await logged(server, path);
      expect(status).toBe(200);
      expect(lines).toMatchObject([{ method: 'GET', status: 200 }]);
    },
  );
});

describe('LOG_SUCCESS_SAMPLE=0.5: about half the successful reads', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: { logSuccessSample: 0.5 } });
  });
  afterAll(() => server.close());

  it('writes between a fifth and four fifths of 200 reads', async () => {
    const from = server.logs.length;
    for (let i = 0; i < 200; i += 1) await (await fetch(`${server.url}/api/auth/session`)).text();
    const count = (await linesUntilNow(server, from)).length;
    expect(count).toBeGreaterThan(40);
    expect(count).toBeLessThan(160);
  });
});
