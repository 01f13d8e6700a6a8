/*
 * One user as an import carries them over from another service (adoption spec §3): the shape a
 * line of `gatehouse users import` reads to, and what `gatehouse import authjs` reads an
 * Auth.js adapter's tables into. Already checked: every field is what its comment says.
 */

/** An identity at a provider, as the old app linked it (an Auth.js `Account` row). */
export interface ImportIdentity {
  /** The provider's id in the old app (`github`, `google`, an OIDC provider's id). */
  provider: string;
  /** The provider's own id for the person (Auth.js's `providerAccountId`). */
  subject: string;
}

/** A passkey as the old app stored it (an Auth.js `Authenticator` row). */
export interface ImportPasskey {
  /** The credential id, base64url without padding. */
  credentialId: string;
  /** The COSE public key, base64url without padding. */
  publicKey: string;
  /** The signature counter last seen (0 when the authenticator keeps none). */
  counter: number;
  /** Transport hints (`internal`, `hybrid`, `usb`, …); empty when none were kept. */
  transports: string[];
  /** Whether the credential is backed up (synced); false when unknown. */
  backedUp: boolean;
}

export interface ImportRecord {
  /** Kept as it is, so the app's own rows keep pointing at the user. */
  id: string;
  /** Normalised (src/users/email.ts). */
  email: string;
  name: string;
  /** When the address was proven, epoch milliseconds; null when it was not. */
  emailVerifiedAt: number | null;
  /** The stored hash as the old app kept it (src/users/legacy-hashes); null: no password. */
  passwordHash: string | null;
  /** Epoch milliseconds; null when the old app kept no date (the import's time is used). */
  createdAt: number | null;
  identities: ImportIdentity[];
  passkeys: ImportPasskey[];
}
