import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const tagBytes = 16;

/** `plaintext` under AES-256-GCM with a fresh 96-bit IV: the IV, and the ciphertext with its tag. */
export function gcmSeal(
  key: Buffer,
  additionalData: Buffer,
  plaintext: string,
): { iv: Buffer; body: Buffer } {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData);
  const body = Buffer.concat([
    cipher.update(plaintext, 'utf8'),
    cipher.final(),
    cipher.getAuthTag(),
  ]);
  return { iv, body };
}

/** What `gcmSeal` sealed, or null when the tag does not verify (another key, data or body). */
export function gcmOpen(
  key: Buffer,
  additionalData: Buffer,
  iv: Buffer,
  body: Buffer,
): string | null {
  if (body.length < tagBytes) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(additionalData);
    decipher.setAuthTag(body.subarray(body.length - tagBytes));
    return Buffer.concat([
      decipher.update(body.subarray(0, body.length - tagBytes)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    // The tag did not verify: another box, or a changed one; it opens to nothing.
    return null;
  }
}
