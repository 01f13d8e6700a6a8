// Secrets in the wrong place stop the start, naming the variables, with a valid example, and
// never repeat the secret: a WEBHOOK_URL carrying a user name and password (fetch never sends
// to one; every attempt's warning used to carry the password), and a key that is another's
// (FACTOR_KEY equal to AUTH_SECRET, in any of its forms). Black-box: the built service and CLI.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  productionWithoutMail,
  startBuiltService,
  type AccountService,
} from '../account/account-service.js';
import { runNode } from '../helpers/spawn.js';

const authSecret = productionWithoutMail.AUTH_SECRET as string;
const otherKey = 'Zk3pQ8vN1sR6tY0wX4bM7cD2fG5hJ9kL+A/eUiOa';
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
const production = (env: Record<string, string>) => service({ ...productionWithoutMail, ...env });

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

describe('a key that is another variable’s', () => {
  const sameAs = (later: string, earlier: string) =>
    `${later}: holds the same key as ${earlier} (or one made of the same bytes); each must be a key of its own, since whoever holds ${earlier} would hold ${later} too: generate one with: openssl rand -base64 33`;

  it.each<[string, Record<string, string>]>([
    ['FACTOR_KEY equal to AUTH_SECRET', { FACTOR_KEY: authSecret }],
    [
      'FACTOR_KEY equal to an older AUTH_SECRET still listed',
      { AUTH_SECRET: `${otherKey},${authSecret}`, FACTOR_KEY: authSecret },
    ],
    [
      'FACTOR_KEY as the hex of AUTH_SECRET’s base64 bytes',
      { FACTOR_KEY: Buffer.from(authSecret, 'base64').toString('hex') },
    ],
    [
      'FACTOR_KEY as AUTH_SECRET in base64url',
      { FACTOR_KEY: Buffer.from(authSecret, 'base64').toString('base64url') },
    ],
  ])('%s stops a production start naming both', async (_, env) => {
    const result = await production(env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(invalid(sameAs('FACTOR_KEY', 'AUTH_SECRET')));
    expect(result.stderr).not.toContain(authSecret);
  });

  it('FACTOR_KEY_FILE holding AUTH_SECRET (a newline after it) is refused as well', async () => {
    const file = path.join(dir, 'factor-key');
    fs.writeFileSync(file, `${authSecret}\n`, { mode: 0o600 });
    const result = await production({ FACTOR_KEY_FILE: file });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(invalid(sameAs('FACTOR_KEY', 'AUTH_SECRET')));
  });

  it('AUDIT_KEY equal to FACTOR_KEY stops a production start naming both', async () => {
    const result = await production({ FACTOR_KEY: otherKey, AUDIT_KEY: otherKey });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(invalid(sameAs('AUDIT_KEY', 'FACTOR_KEY')));
  });

  it('WEBHOOK_SECRET made of AUTH_SECRET’s bytes is refused with its own advice', async () => {
    const result = await production({
      WEBHOOK_URL: 'https://app.example.com/hooks',
      WEBHOOK_SECRET: `whsec_${authSecret}`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      invalid(
        'WEBHOOK_SECRET: holds the same key as AUTH_SECRET (or one made of the same bytes); each must be a key of its own, since whoever holds AUTH_SECRET would hold WEBHOOK_SECRET too: generate one with: WEBHOOK_SECRET=whsec_$(openssl rand -base64 32)',
      ),
    );
  });

  describe('while it starts', () => {
    let started: AccountService | undefined;
    afterAll(() => started?.stop());

    it('in development it is a warning naming both, and the service starts', async () => {
      started = await startBuiltService(
        { DATA_DIR: path.join(dir, 'development') },
        { FACTOR_KEY: authSecret, AUTH_SECRET: authSecret },
      );
      expect((await fetch(`${started.url}/api/health`)).status).toBe(200);
      expect(started.output()).toContain(
        `gatehouse: warning: ${sameAs('FACTOR_KEY', 'AUTH_SECRET')}\n`,
      );
      await started.stop();
      started = undefined;
    });

    it('in production an older FACTOR_KEY entry that is AUTH_SECRET (a rotation away) only warns', async () => {
      started = await startBuiltService(
        { DATA_DIR: path.join(dir, 'rotating') },
        { ...productionWithoutMail, FACTOR_KEY: `${otherKey},${authSecret}` },
      );
      expect((await fetch(`${started.url}/api/health`)).status).toBe(200);
      expect(started.output()).toContain(
        'gatehouse: warning: FACTOR_KEY: holds the same key as AUTH_SECRET (or one made of the same bytes) in an older entry of its list: it still opens what that key sealed, so drop it from FACTOR_KEY as soon as nothing needs it\n',
      );
    });
  });
});
