import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createPasskeyStore } from '../../src/account/passkeys/passkey-store.js';
import type { Database } from '../../src/db/schema.js';
import type { Client } from './client.js';

/*
 * A passkey in software: an ES256 key pair and the bytes an authenticator signs, so a test can
 * register it and answer Gatehouse's WebAuthn challenges over plain HTTP (user verification on or off, any
 * signature counter) where a browser's virtual authenticator cannot (Chromium protects a
 * discoverable credential from use without user verification).
 */

const b64url = (bytes: Buffer | Uint8Array) => Buffer.from(bytes).toString('base64url');

/** The COSE form of an EC2 P-256 public key (kty 2, alg -7, crv 1, x, y), as CBOR. */
function coseKey(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  const x = Buffer.from(jwk.x ?? '', 'base64url');
  const y = Buffer.from(jwk.y ?? '', 'base64url');
  return Buffer.concat([
    Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
    x,
    Buffer.from([0x22, 0x58, 0x20]),
    y,
  ]);
}

/** CBOR's head of a byte string of `length` bytes (under 65,536). */
function cborBytes(length: number): Buffer {
  if (length < 24) return Buffer.from([0x40 + length]);
  if (length < 256) return Buffer.from([0x58, length]);
  return Buffer.from([0x59, length >> 8, length & 0xff]);
}

/** CBOR's text string, for the few short ASCII keys an attestation object has. */
const cborText = (text: string) =>
  Buffer.concat([Buffer.from([0x60 + text.length]), Buffer.from(text)]);

export interface SoftPasskey {
  /** The credential id, base64url. */
  id: string;
  /** The COSE public key, base64url, as the store keeps it. */
  publicKey: string;
  /** The JSON a browser posts as `data` for an assertion of `challenge`. */
  assert(options: {
    challenge: string;
    origin: string;
    userVerified: boolean;
    counter: number;
  }): string;
  /**
   * The JSON a browser posts as `data` for a registration of `challenge`: attestation `none`,
   * user verified, signature counter 0.
   */
  register(options: { challenge: string; origin: string }): string;
}

export function softPasskey(): SoftPasskey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const id = b64url(randomBytes(16));
  /** The credential as a browser's `toJSON()` gives it, around `response`. */
  const credentialJson = (response: Record<string, unknown>) =>
    JSON.stringify({ id, rawId: id, type: 'public-key', response, clientExtensionResults: {} });
  return {
    id,
    publicKey: b64url(coseKey(publicKey)),
    assert({ challenge, origin, userVerified, counter }) {
      const rpId = new URL(origin).hostname;
      const flags = 0x01 | (userVerified ? 0x04 : 0);
      const count = Buffer.alloc(4);
      count.writeUInt32BE(counter);
      const authenticatorData = Buffer.concat([
        createHash('sha256').update(rpId).digest(),
        Buffer.from([flags]),
        count,
      ]);
      const clientDataJSON = Buffer.from(
        JSON.stringify({ type: 'webauthn.get', challenge, origin, crossOrigin: false }),
      );
      const signed = Buffer.concat([
        authenticatorData,
        createHash('sha256').update(clientDataJSON).digest(),
      ]);
      return credentialJson({
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(sign('sha256', signed, privateKey)),
      });
    },
    register({ challenge, origin }) {
      const rpId = new URL(origin).hostname;
      const credentialId = Buffer.from(id, 'base64url');
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(credentialId.length);
      const authenticatorData = Buffer.concat([
        createHash('sha256').update(rpId).digest(),
        // User present, user verified, attested credential data included.
        Buffer.from([0x01 | 0x04 | 0x40]),
        Buffer.alloc(4),
        // The AAGUID: zeros, as an authenticator that says nothing of its make.
        Buffer.alloc(16),
        idLength,
        credentialId,
        coseKey(publicKey),
      ]);
      const attestationObject = Buffer.concat([
        Buffer.from([0xa3]),
        cborText('fmt'),
        cborText('none'),
        cborText('attStmt'),
        Buffer.from([0xa0]),
        cborText('authData'),
        cborBytes(authenticatorData.length),
        authenticatorData,
      ]);
      const clientDataJSON = Buffer.from(
        JSON.stringify({ type: 'webauthn.create', challenge, origin, crossOrigin: false }),
      );
      return credentialJson({
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      });
    },
  };
}

/** A soft passkey stored for `userId` as a registration stores one, added at `at` (ms). */
export async function storedSoftPasskey(
  db: Kysely<Database>,
  userId: string,
  added: { name: string; at: number },
): Promise<{ key: SoftPasskey; id: string }> {
  const key = softPasskey();
  const id = await createPasskeyStore(db).add(
    db,
    {
      userId,
      credentialId: key.id,
      publicKey: key.publicKey,
      counter: 0,
      transports: ['internal'],
      backedUp: false,
      name: added.name,
    },
    added.at,
  );
  return { key, id: id ?? '' };
}

/**
 * A passkey sign-in as next-auth/webauthn makes it, over HTTP: the options, the assertion of
 * their challenge by `key` (user verified, at `counter`), and the post; the post's answer.
 */
export async function signInWithSoftPasskey(
  client: Client,
  key: SoftPasskey,
  counter: number,
): Promise<Response> {
  const got = (await (
    await client.get('/api/auth/webauthn-options/passkey?action=authenticate')
  ).json()) as { options: { challenge: string } };
  const data = key.assert({
    challenge: got.options.challenge,
    origin: client.baseUrl,
    userVerified: true,
    counter,
  });
  return client.postForm(
    '/api/auth/callback/passkey',
    { csrfToken: await client.csrfToken(), action: 'authenticate', data },
    { 'x-auth-return-redirect': '1' },
  );
}
