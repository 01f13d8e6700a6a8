import type {
  AuthenticationResponseJSON,
  RegistrationResponseJSON,
  WebAuthnCredential,
} from '@simplewebauthn/server';
import { challengeTtlSeconds } from './webauthn-challenge.js';
import { lazyModule } from '../../util/lazy-module.js';

/*
 * The WebAuthn ceremonies, on @simplewebauthn/server, with the choices Auth.js's Passkey
 * provider makes (providers/passkey.ts) except one: user verification is `preferred`, not
 * `required`, because an assertion without it still signs in as a password would (accounts
 * spec), and one with it counts as both factors. Discoverable credentials only: the
 * authentication options never name a credential, so they never depend on who asks.
 */

/** Where the ceremony runs: Auth.js's default relying party is the request URL's host. */
export interface RelyingParty {
  id: string;
  name: string;
  origin: string;
}

export const relyingPartyOf = (origin: string): RelyingParty => {
  const url = new URL(origin);
  return { id: url.hostname, name: url.host, origin: url.origin };
};

const timeoutMs = challengeTtlSeconds * 1000;

/**
 * The WebAuthn library and its ASN.1 and X.509 dependencies, a fifth of the bundle: loaded when
 * a ceremony first runs, not at every start (evaluating them was ~10 % of start-up,
 * docs/performance.md). Inside the bundle all the same, so nothing is fetched from disk then.
 */
const webauthn = lazyModule('the WebAuthn library', () => import('@simplewebauthn/server'));

/** Options for `navigator.credentials.get`: no `allowCredentials`, the same for everyone. */
export async function authenticationOptions(rp: RelyingParty) {
  const { generateAuthenticationOptions } = await webauthn();
  return generateAuthenticationOptions({
    rpID: rp.id,
    timeout: timeoutMs,
    userVerification: 'preferred',
  });
}

/** Options for `navigator.credentials.create`: a discoverable credential for this user. */
export async function registrationOptions(
  rp: RelyingParty,
  user: { email: string; name: string },
  existing: readonly { id: string; transports: string[] }[],
) {
  const { generateRegistrationOptions } = await webauthn();
  return generateRegistrationOptions({
    rpID: rp.id,
    rpName: rp.name,
    // A random user handle (the library's default), as Auth.js does: the store links a
    // credential to its user by the credential's id, and the handle says nothing of who it is.
    userName: user.email,
    userDisplayName: user.name === '' ? user.email : user.name,
    timeout: timeoutMs,
    attestationType: 'none',
    excludeCredentials: existing.map((credential) => ({
      id: credential.id,
      transports: credential.transports,
    })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
}

/** A browser's answer as the client posted it (`data`, JSON), or null when it is not one. */
export function parseResponse(data: unknown): { id: string; value: unknown } | null {
  if (typeof data !== 'string' || data.length > 16_384) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object' || !('id' in parsed)) return null;
  const { id } = parsed as { id: unknown };
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,1400}$/.test(id)) return null;
  return { id, value: parsed };
}

export interface VerifiedRegistration {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  backedUp: boolean;
}

/** What a response is checked against: its challenge, this origin and relying party. */
const expected = (rp: RelyingParty, expectedChallenge: string) => ({
  expectedChallenge,
  expectedOrigin: rp.origin,
  expectedRPID: rp.id,
});

/** A registration response checked against its challenge; null when it does not verify. */
export async function verifyRegistration(
  rp: RelyingParty,
  response: unknown,
  expectedChallenge: string,
): Promise<VerifiedRegistration | null> {
  // Outside the try: a library that cannot load is the service's fault, never a "no".
  const { verifyRegistrationResponse } = await webauthn();
  try {
    const result = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      ...expected(rp, expectedChallenge),
      requireUserVerification: false,
    });
    if (!result.verified) return null;
    const { credential, credentialBackedUp } = result.registrationInfo;
    return {
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ?? [],
      backedUp: credentialBackedUp,
    };
  } catch {
    // The library throws for every malformed or mismatched response: all of them are "no".
    return null;
  }
}

/** An assertion checked against a stored credential; null when it does not verify. */
export async function verifyAssertion(
  rp: RelyingParty,
  response: unknown,
  expectedChallenge: string,
  credential: { credentialId: string; publicKey: string; counter: number; transports: string[] },
): Promise<{ newCounter: number; userVerified: boolean } | null> {
  const { verifyAuthenticationResponse } = await webauthn();
  try {
    const result = await verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      ...expected(rp, expectedChallenge),
      credential: {
        id: credential.credentialId,
        publicKey: new Uint8Array(Buffer.from(credential.publicKey, 'base64url')),
        counter: credential.counter,
        transports: credential.transports as WebAuthnCredential['transports'],
      },
      // UV decides what the sign-in proves, not whether it happens.
      requireUserVerification: false,
    });
    if (!result.verified) return null;
    return {
      newCounter: result.authenticationInfo.newCounter,
      userVerified: result.authenticationInfo.userVerified,
    };
  } catch {
    // A bad signature, origin or challenge, or a signature counter that did not move on (the
    // library's sign of a cloned authenticator): refused alike.
    return null;
  }
}
