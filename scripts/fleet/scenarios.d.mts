// Types for scenarios.mjs: what each scenario observed.
import type { Fleet, RestartStep } from './fleet.mjs';

/** `signed-in`, Auth.js's error code (`credentials`, `rate_limited`), or `failed`. */
export type SignInOutcome = string;
/** What a session read gave: the email, `null` (no session), or undefined (not a session answer). */
export type Read = string | null | undefined;

export interface LoadOptions {
  readers?: number;
  signers?: number;
  readPauseMs?: number;
  signPauseMs?: number;
}

export interface LoadRecord {
  kind: 'session' | 'csrf' | 'signin' | 'session-new';
  start: number;
  end: number;
  status: number;
  upstream: string;
  ok: boolean;
  reason: string | undefined;
}

type Scenario<Options, Result> = ((fleet: Fleet, options?: Options) => Promise<Result>) & {
  /** What would be wrong with the result, in words; empty when it is as expected. */
  problems(result: Result): string[];
};

export const crossRead: Scenario<
  never,
  {
    email: string;
    results: { signedInThrough: string; outcome: SignInOutcome; reads: Record<string, Read> }[];
  }
>;

export const revocation: Scenario<
  never,
  {
    results: {
      action: 'sign-out through A' | 'users revoke-sessions' | 'users disable';
      email: string;
      outcome: SignInOutcome;
      before: Record<string, Read>;
      /** The sign-out's HTTP status, or the CLI's exit code. */
      ended: number | null;
      after: Record<string, Read>;
      signInAfter: SignInOutcome | undefined;
    }[];
  }
>;

export const throttle: Scenario<
  never,
  {
    limit: number;
    results: {
      pattern: string;
      email: string;
      attempts: { through: string; outcome: SignInOutcome; upstream: string }[];
      trippedAt: number | undefined;
      refusedWith: SignInOutcome | undefined;
      upstreams: string[];
      rightPasswordAfter: Record<string, SignInOutcome>;
    }[];
  }
>;

export const rollingRestart: Scenario<
  { warmMs?: number; settleMs?: number; load?: LoadOptions },
  {
    restarts: (RestartStep & { servedAfterBack: number })[];
    total: number;
    failed: number;
    byKind: Partial<Record<LoadRecord['kind'], { total: number; failed: number }>>;
    failures: LoadRecord[];
    retried: number;
  }
>;

export const kill9: Scenario<
  { index?: number; warmMs?: number; downMs?: number; load?: LoadOptions },
  {
    killed: string;
    total: number;
    failed: number;
    /** From SIGKILL to the exit being seen: requests delivered meanwhile were in flight on it. */
    exitMs: number;
    inFlightOnIt: number;
    failedInFlight: number;
    failedOtherwise: {
      kind: LoadRecord['kind'];
      msAfterKill: number;
      ms: number;
      status: number;
      upstream: string;
      reason: string | undefined;
    }[];
    removedMs: number;
    whileDown: { total: number; failed: number };
    sessionsBefore: number;
    sessionsStillRead: number;
    addedSignIn: SignInOutcome;
  }
>;

export const postgresRestart: Scenario<
  { downMs?: number; tailMs?: number; load?: LoadOptions },
  {
    stopMs: number;
    downMs: number;
    startMs: number;
    recoverMs: number | undefined;
    firstSuccessMs: number | undefined;
    probesWhileDown: number;
    readiness503WhileDown: number;
    readinessOtherWhileDown: {
      name: string;
      ready: number;
      live: number;
      alive: boolean;
      at: number;
    }[];
    livenessNot200WhileDown: number;
    exitedWhileDown: number;
    sameProcesses: boolean;
    load: { total: number; failed: number };
    loadWhileDown: { total: number; failed: number };
    loadStatusesWhileDown: Record<string, number>;
    afterRecovery: { total: number; failed: number };
    signInAfter: SignInOutcome;
    oldCookiesRead: number;
    oldCookies: number;
  }
>;
