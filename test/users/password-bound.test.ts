import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf as post } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { startMailService, type MailService } from '../account/account-service.js';

/*
 * One bound before NFKC on every route that takes a new password (issue 25.6). NFKC sorts a run
 * of combining marks by insertion: a 4,096-unit password of 2,047 marks of one class then 2,048
 * of a lower one costs milliseconds of event loop per request, and sign-up, reset and
 * invitation paid it before any limit, so nothing ever throttled it (a change proves the current
 * password first, through the throttle). Black-box: the
 * service in process over HTTP, a real SMTP server on loopback.
 */

const password = 'correct horse battery staple';
/** Within the fields' 4,096-unit bound; NFKC reorders every mark of the second half. */
const markBomb = `a${'\u0301'.repeat(2047)}${'\u0316'.repeat(2048)}`;
/** As long, no marks: refused as too long, at no cost. */
const plainLong = 'a'.repeat(4096);
const rounds = 15;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

describe('a new password is bounded before it is normalised', () => {
  let mailed: MailService;

  beforeAll(async () => {
    mailed = await startMailService({
      users: ['ada@example.com'],
      password,
      env: {
        SIGNUP: 'open',
        THROTTLE_IP_MAX_FAILURES: '100000',
        THROTTLE_EMAIL_MAX_FAILURES: '100000',
      },
    });
  });
  afterAll(async () => {
    await mailed?.close();
  });

  const routes: [string, (client: Client, newPassword: string) => Promise<Response>][] = [
    [
      'sign-up',
      (client, p) =>
        post(client, '/api/account/signup', { email: 'new@example.com', name: 'N', password: p }),
    ],
    [
      'password reset',
      (client, p) =>
        post(client, '/api/account/password/reset', { token: 'x'.repeat(43), password: p }),
    ],
    [
      'invitation accept',
      (client, p) =>
        post(client, '/api/account/invitation/accept', { token: 'x'.repeat(43), password: p }),
    ],
  ];

  it.each(routes)(
    '%s refuses 4,095 combining marks as fast as any over-long password, saying why',
    async (_route, send) => {
      const client = new Client(mailed.service.url);
      const timed = async (newPassword: string) => {
        const started = performance.now();
        const response = await send(client, newPassword);
        const elapsed = performance.now() - started;
        const body = (await response.json()) as { error: { code: string; message: string } };
        expect([response.status, body.error.code]).toEqual([422, 'weak_password']);
        return { elapsed, message: body.error.message };
      };
      // Warm both paths (the policy module loads on the first new password).
      await timed(plainLong);
      const bomb = await timed(markBomb);
      expect(bomb.message).toBe(
        'The password must not have more than 30 combining marks in a row.',
      );
      const bombs: number[] = [];
      const plains: number[] = [];
      for (let i = 0; i < rounds; i += 1) {
        bombs.push((await timed(markBomb)).elapsed);
        plains.push((await timed(plainLong)).elapsed);
      }
      // Unbounded, the marks cost 5-9 ms more per request on a 2-core test machine.
      expect(median(bombs) - median(plains)).toBeLessThan(2.5);
    },
  );
});
