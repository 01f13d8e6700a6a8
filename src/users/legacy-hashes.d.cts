/** Firebase's project-wide scrypt parameters (`IMPORT_FIREBASE_SCRYPT`), keys in base64. */
export interface FirebaseScryptParams {
  signerKey: string;
  saltSeparator: string;
  rounds: number;
  memCost: number;
}

export type HashFormat =
  | 'bcrypt'
  | 'argon2id'
  | 'argon2i'
  | 'scrypt'
  | 'scrypt-better-auth'
  | 'pbkdf2-sha256'
  | 'django-pbkdf2-sha256'
  | 'firebase-scrypt';

export type HashReading =
  { ok: true; format: HashFormat; cost: string } | { ok: false; problem: string };

export function readHash(hash: unknown, firebase?: FirebaseScryptParams | null): HashReading;
export function verifyHash(
  hash: string,
  password: string,
  firebase?: FirebaseScryptParams | null,
): boolean;
export const limits: { bcryptMaxCost: number; pbkdf2MaxIterations: number };
