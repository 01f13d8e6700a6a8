// Secrets in the wrong place stop the start, naming the variables, with a valid example, and
// never repeat the secret: a WEBHOOK_URL carrying a user name and password (fetch never sends
// to one; every attempt's warning used to carry the password), and a key that is another's
// (FACTOR_KEY equal to AUTH_SECRET, in any of its forms). Black-box: the built service and CLI.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNode } from '../helpers/spawn.js';

const webhookSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const invalid = (...problems: string[]) =>
  `gatehouse: invalid configuration\n${problems.map((p) => `  - ${p}`).join('\n')}\n`;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-secret-refusals-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const service = (env: Record<string, string>) =>
  runNode('gatehouse.mjs', [], { HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), ...env });

describe('a WEBHOOK_URL with a user name or password', () => {
  const url = 'https://hooks:pw-not-shown@app.example.com/hooks?token=token-not-shown';
  const problem =
    "WEBHOOK_URL: must not carry a user name or password (https://***@app.example.com/hooks?token=***): such a URL is never delivered to; the receiver checks each delivery's signature (WEBHOOK_SECRET) instead, e.g. WEBHOOK_URL=https://app.example.com/hooks/gatehouse";

  it('stops the start, naming the variable and a valid example, the credentials masked', async () => {
    const result = await service({ WEBHOOK_URL: url, WEBHOOK_SECRET: webhookSecret });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(invalid(problem));
    expect(result.stdout + result.stderr).not.toMatch(/pw-not-shown|token-not-shown/);
  });

  it('is refused by the CLI too, in the same words', async () => {
    const result = await runNode('gatehouse-cli.cjs', ['users', 'list'], {
      DATA_DIR: path.join(dir, 'cli'),
      WEBHOOK_URL: `https://app.example.com/other ${url}`,
      WEBHOOK_SECRET: webhookSecret,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(problem);
    expect(result.stdout + result.stderr).not.toMatch(/pw-not-shown|token-not-shown/);
  });
});

it('a DATABASE_URL the PostgreSQL driver cannot read is named, its password never repeated', async () => {
  const result = await service({ DATABASE_URL: 'postgresql://gatehouse:pw-not-shown@db:99999/x' });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(
    'gatehouse: failed to start: DATABASE_URL: is not a URL the PostgreSQL driver can read; check the port, and percent-encode @ : / ? # in the user name and password (e.g. postgresql://gatehouse:p%40ss@db:5432/gatehouse)\n',
  );
  expect(result.stderr).not.toContain('pw-not-shown');
});
