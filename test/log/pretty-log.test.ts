import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prettyLine } from '../../src/log/pretty-line.js';
import { freePort, startServerProcess, untilOutput } from '../helpers/processes.js';
import { distDir } from '../helpers/spawn.js';

// Development logs a person can read (LOG_FORMAT=pretty, the default at a development
// terminal); JSON lines otherwise, as a log system reads them.

/** The service's output once it has `written` (its lines are written asynchronously). */
async function output(env: Record<string, string>, written: RegExp): Promise<string> {
  const port = await freePort();
  const server = await startServerProcess(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
    port,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: path.join('/tmp', `gatehouse-pretty-${port}`),
      AUTH_SECRET: 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt',
      ...env,
    },
  });
  try {
    await fetch(`http://127.0.0.1:${port}/api/auth/session`);
    return await untilOutput(server.output, written);
  } finally {
    await server.stop();
  }
}

describe('LOG_FORMAT', () => {
  it('pretty: time, level, message, then the fields; no JSON line', async () => {
    const text = await output(
      { LOG_FORMAT: 'pretty' },
      /path=\/api\/auth\/session|"msg":"request"/,
    );
    expect(text).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}started in development mode: store sqlite /m,
    );
    expect(text).toMatch(
      /INFO {2}request {2}reqId=\S+ method=GET path=\/api\/auth\/session status=200 /,
    );
    expect(text.split('\n').filter((line) => line.startsWith('{"level"'))).toEqual([]);
  });

  it('auto, with output to a pipe (not a terminal): JSON lines, as before', async () => {
    const text = await output({}, /started in/);
    expect(text).toMatch(/^\{"level":30,.*"msg":"started in development mode/m);
  });

  it('an error keeps its stack, indented under its line; a line that is not JSON stays as it is', () => {
    const line = JSON.stringify({
      level: 50,
      time: Date.UTC(2026, 10, 29, 4, 5, 6, 7),
      msg: 'could not record an account event',
      event: 'signin',
      err: { message: 'boom', stack: 'Error: boom\n    at here' },
    });
    expect(prettyLine(`${line}\n`)).toBe(
      '04:05:06.007 ERROR could not record an account event  event=signin\n    Error: boom\n        at here\n',
    );
    expect(prettyLine('not json\n')).toBe('not json\n');
  });
});
