import { createHash, randomBytes } from 'node:crypto';

/*
 * Recovery codes: 10, each 80 random bits (16 characters of Crockford's base32, which has no
 * I, L, O or U and reads a typed i, l as 1 and o as 0), shown once, kept only as SHA-256 bound to the user. A code's entropy
 * is what protects it: a hash of 80 random bits cannot be reversed by guessing, so no slow
 * hash is needed.
 */

export const recoveryCodeCount = 10;
const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
const codeLength = 16;

/** One new code, in groups of four for reading aloud or typing: `abcd-efgh-jkmn-pqrs`. */
function newCode(): string {
  const bytes = randomBytes(10); // 80 bits, 5 bits a character
  let bits = 0n;
  for (const byte of bytes) bits = (bits << 8n) | BigInt(byte);
  let text = '';
  for (let index = 0; index < codeLength; index += 1) {
    text = alphabet[Number(bits & 31n)] + text;
    bits >>= 5n;
  }
  return text.match(/.{4}/g)?.join('-') ?? text;
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: recoveryCodeCount }, newCode);
}

/** A code as typed (any case, with or without dashes and spaces), or null when it cannot be one. */
export function readRecoveryCode(typed: unknown): string | null {
  if (typeof typed !== 'string' || typed.length > 64) return null;
  const code = typed.toLowerCase().replace(/[\s-]/g, '').replace(/[il]/g, '1').replace(/o/g, '0');
  return code.length === codeLength && [...code].every((c) => alphabet.includes(c)) ? code : null;
}

/** What the store keeps of a code: its hash, bound to its user. */
export function recoveryCodeHash(userId: string, code: string): string {
  return createHash('sha256')
    .update(`gatehouse recovery code\0${userId}\0${code.replace(/-/g, '')}`)
    .digest('base64url');
}
