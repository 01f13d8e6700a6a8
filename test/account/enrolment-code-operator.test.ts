import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '../helpers/backends.js';
import { Client } from '../helpers/client.js';
import { firstPass } from '../helpers/passes.js';
import { freePort, untilAccepts } from '../helpers/processes.js';
import { runNode } from '../helpers/spawn.js';
import { refusalCode } from '../helpers/totp-codes.js';
import {
  productionWithoutMail,
  startBuiltService,
  startService,
  type OwnService,
} from './account-service.js';

/*
 * Issue 35, item 3, mail off: with SECOND_FACTOR=required and no SMTP_URL (production), nothing
 * can be mailed to prove an enrolment at sign-in, so the password alone is answered
 * `enrolment_code_required` and only an operator's one-time enrolment code, from the CLI or the
 * admin API, enrols (once). The built service (for its admin API) over SQLite and PostgreSQL;
 * real TOTP codes.
 */

const password = 'correct horse battery staple';
const opsToken = 'ops-token-0123456789abcdef0123456789abcdef';

describe.each(databaseBackends('enrolment-code'))(
  "an operator's enrolment code with mail off, on $name",
  ({ dialect, skip: noBackend }) => {
    const skip = noBackend || !firstPass;
    let own: OwnService;
    let adminUrl: string;
    let dir: string;

    beforeAll(async () => {
      if (skip) return;
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-enrolment-code-'));
      const tokenFile = path.join(dir, 'admin-tokens');
      fs.writeFileSync(tokenFile, `ops:${opsToken}\n`);
      const adminPort = await freePort();
      adminUrl = `http://127.0.0.1:${adminPort}`;
      // The admin API's own listener: the built service's (account-service.ts).
      own = await startService({
        start: startBuiltService,
        backend: dialect,
        env: {
          ...productionWithoutMail,
          SECOND_FACTOR: 'required',
          FACTOR_KEY: randomBytes(33).toString('base64'),
          ADMIN_PORT: String(adminPort),
          ADMIN_TOKEN_FILE: tokenFile,
        },
        users: ['cli@example.com', 'api@example.com', 'none@example.com'],
        password,
      });
      await untilAccepts(adminPort);
    }, 60_000);
    afterAll(async () => {
      if (skip) return;
      await own.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    // The CLI with the service's variables: the code is kept under its AUTH_SECRET.
    const cli = (args: string[]) =>
      runNode('gatehouse-cli.cjs', args, { ...own.databaseEnv, ...productionWithoutMail });

    const admin = (route: string, method = 'GET') =>
      fetch(`${adminUrl}/api/admin${route}`, {
        method,
        headers: { authorization: `Bearer ${opsToken}` },
      });

    /** A password sign-in refused for enrolment, and the key its challenge enrols. */
    async function enrolmentStep(email: string) {
      const client = new Client(own.service.url);
      expect(await refusalCode(await client.signIn(email, password))).toBe(
        'enrolment_code_required',
      );
      const answer = await client.get('/api/auth/enrolment/totp');
      expect(answer.status).toBe(200);
      const key = (await answer.json()) as { secret: string; codeSentTo: string | null };
      expect(key.codeSentTo).toBeNull();
      return { client, totp: new TOTP({ secret: Secret.fromBase32(key.secret) }) };
    }

    const post = async (client: Client, fields: Record<string, string>) =>
      refusalCode(
        await client.postForm(
          '/api/auth/callback/credentials',
          { csrfToken: await client.csrfToken(), ...fields },
          { 'x-auth-return-redirect': '1' },
        ),
      );

    it.skipIf(skip)(
      "the password gets enrolment_code_required; its page asks for the administrator's code; the app's code alone, or a made-up code, enrols nothing",
      async () => {
        const { client, totp } = await enrolmentStep('none@example.com');
        expect(await post(client, { otp: totp.generate() })).toBe('enrolment_code_required');
        expect(await post(client, { otp: totp.generate(), emailCode: 'ABCDEFGH' })).toBe(
          'email_code_invalid',
        );
        const page = await (
          await client.get(
            '/api/auth/signin?error=CredentialsSignin&code=enrolment_code_required',
            {
              accept: 'text/html',
            },
          )
        ).text();
        expect(page).toContain(
          '<label for="emailCode">Enrolment code from your administrator</label>',
        );
        expect(page).toContain('ask your administrator for an enrolment code');
        expect(page).not.toContain('we have mailed');
        expect(client.sessionCookie()).toBeUndefined();
      },
    );

    it.skipIf(skip)(
      'the CLI prints a code that enrols once, recorded in the audit log with the operator as actor',
      async () => {
        // Without the service's secret there is no code it could check: refused, naming it.
        const secretless = await runNode(
          'gatehouse-cli.cjs',
          ['users', 'enrolment-code', '--email', 'cli@example.com'],
          { ...own.databaseEnv, NODE_ENV: 'production' },
        );
        expect(secretless.code).toBe(1);
        expect(secretless.stderr).toContain('AUTH_SECRET is not set');
        const issued = await cli(['users', 'enrolment-code', '--email', 'cli@example.com']);
        expect(issued.code, issued.stderr).toBe(0);
        expect(issued.stdout).toMatch(
          /^enrolment code for cli@example\.com, works once until \S+:$/m,
        );
        const code = /^([2-9A-HJ-NP-Z]{8})$/m.exec(issued.stdout)?.[1] ?? '';
        expect(code).not.toBe('');

        const { client, totp } = await enrolmentStep('cli@example.com');
        expect(await post(client, { otp: totp.generate(), emailCode: code })).toBeNull();
        expect(client.sessionCookie()).toBeDefined();
        // An account with a factor has nothing to enrol: no code, said plainly.
        const again = await cli(['users', 'enrolment-code', '--email', 'cli@example.com']);
        expect(again.code).toBe(1);
        expect(again.stderr).toContain('has a second factor already');

        // After an operator's reset, the spent code does not enrol a second time.
        expect(
          (await cli(['users', 'reset-second-factor', '--email', 'cli@example.com'])).code,
        ).toBe(0);
        const next = await enrolmentStep('cli@example.com');
        expect(await post(next.client, { otp: next.totp.generate(), emailCode: code })).toBe(
          'email_code_invalid',
        );

        const audit = (await (await admin('/audit?limit=1000')).json()) as {
          entries: { type: string; actor: string | null; detail: unknown }[];
        };
        const entries = audit.entries.filter((entry) => entry.type === 'enrolment_code_issued');
        expect(entries.map((entry) => entry.actor)).toEqual(['gatehouse CLI']);
        expect(JSON.stringify(entries)).not.toContain(code);
      },
    );

    it.skipIf(skip)(
      'the admin API answers a code that enrols; a newer one voids it; 409 with a factor, 404 for nobody',
      async () => {
        const users = (await (await admin('/users?query=api@example.com')).json()) as {
          users: { id: string }[];
        };
        const id = users.users[0]?.id ?? '';
        const first = await admin(`/users/${id}/enrolment-code`, 'POST');
        expect(first.status).toBe(201);
        const earlier = (await first.json()) as { code: string; expiresAt: string };
        expect(Date.parse(earlier.expiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
        const second = (await (await admin(`/users/${id}/enrolment-code`, 'POST')).json()) as {
          code: string;
        };
        const { client, totp } = await enrolmentStep('api@example.com');
        expect(await post(client, { otp: totp.generate(), emailCode: earlier.code })).toBe(
          'email_code_invalid',
        );
        expect(await post(client, { otp: totp.generate(), emailCode: second.code })).toBeNull();
        expect((await admin(`/users/${id}/enrolment-code`, 'POST')).status).toBe(409);
        expect(
          (await admin('/users/00000000-0000-4000-8000-000000000000/enrolment-code', 'POST'))
            .status,
        ).toBe(404);
        const audit = (await (await admin('/audit?limit=1000')).json()) as {
          entries: { type: string; actor: string | null }[];
        };
        expect(
          audit.entries
            .filter((entry) => entry.type === 'enrolment_code_issued')
            .map((e) => e.actor),
        ).toContain('admin API (ops)');
      },
    );
  },
);
