import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import {
  signedInAs,
  startProviderService,
  viaProvider,
  type ProviderService,
} from '../helpers/provider-service.js';

/*
 * A provider's sign-in counts against the address's rates as a right password does (decisions.md:
 * every attempt, successes too): charged, and its failure charge taken back. A person who signs
 * in with their provider again and again is never locked out by their own sign-ins, and their
 * sign-ins do not add to a guesser's failures at the address.
 */
describe('a provider’s sign-ins and the address’s failure limit', () => {
  let service: ProviderService;

  beforeAll(async () => {
    service = await startProviderService({
      signup: 'open',
      throttle: { emailMaxFailures: 3, emailMaxAttempts: 1000 },
    });
  });
  afterAll(() => service.close());

  it('five sign-ins in a row, then two wrong guesses and a sixth: none of them locks the address', async () => {
    const { idp, server } = service;
    idp.login({ sub: 'often-1', email: 'often@example.com', emailVerified: true, name: 'Oft' });
    for (let i = 0; i < 5; i += 1) {
      const browser = new Client(server.url);
      await viaProvider(browser, idp);
      expect(await signedInAs(browser)).toBe('often@example.com');
    }
    for (let i = 0; i < 2; i += 1) {
      const guess = await new Client(server.url).signIn('often@example.com', 'a wrong guess here');
      expect((await guess.json()) as { url: string }).toMatchObject({
        url: expect.stringContaining('error=CredentialsSignin'),
      });
    }
    const browser = new Client(server.url);
    await viaProvider(browser, idp);
    expect(await signedInAs(browser)).toBe('often@example.com');
  });
});
