/** A user as sign-in and the CLI see it. */
export interface User {
  id: string;
  email: string;
  name: string;
  passwordHash: string;
  disabled: boolean;
  /**
   * Moved on by every credential change (set-password, disable, enable), not by a hash
   * upgrade: a sign-in's session is issued only while the version it verified is current.
   */
  credentialVersion: number;
  createdAt: number;
  updatedAt: number;
}

export interface NewUser {
  email: string;
  name: string;
  passwordHash: string;
}

/** What sign-in and the users CLI need of a user store; "not found" is `null`. */
export interface UserStore {
  findByEmail(normalisedEmail: string): Promise<User | null>;
  findById(id: string): Promise<User | null>;
  /** `null` when the email is taken (the unique constraint decides, so races create one). */
  create(user: NewUser): Promise<User | null>;
  list(): Promise<User[]>;
  count(): Promise<number>;
  /**
   * Each returns false when no such user exists; the first three also end the user's sessions.
   * Setting a password and disabling or enabling move the credential version on.
   */
  setPasswordHash(id: string, passwordHash: string): Promise<boolean>;
  /**
   * Replaces a hash made with old parameters; sessions and the credential version stay, and a
   * concurrent change wins.
   */
  upgradePasswordHash(id: string, oldHash: string, newHash: string): Promise<void>;
  setDisabled(id: string, disabled: boolean): Promise<boolean>;
  remove(id: string): Promise<boolean>;
  /** Changes the display name only; false when no such user exists. */
  rename(id: string, name: string): Promise<boolean>;
  /**
   * Moves the user to another normalised email, ends their sessions and moves the credential
   * version on; the new address counts as unverified. 'taken' when another user has that email
   * (nothing changes), 'missing' when no such user exists.
   */
  setEmail(id: string, normalisedEmail: string): Promise<'changed' | 'taken' | 'missing'>;
}
