import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/*
 * A passkey in software: an ES256 key pair and the bytes an authenticator signs, so a test can
 * answer Gatehouse's WebAuthn challenges over plain HTTP (user verification on or off, any
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
}

export function softPasskey(): SoftPasskey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const id = b64url(randomBytes(16));
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
      return JSON.stringify({
        id,
        rawId: id,
        type: 'public-key',
        response: {
          clientDataJSON: b64url(clientDataJSON),
          authenticatorData: b64url(authenticatorData),
          signature: b64url(sign('sha256', signed, privateKey)),
        },
        clientExtensionResults: {},
      });
    },
  };
}
