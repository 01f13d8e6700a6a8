import type { Provider } from '@auth/core/providers';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ChallengePurpose } from '../challenge/challenges.js';
import type { PageView } from '../pages/signin/auth-pages.js';
import type { SignInVia } from './request/request-context.js';
import type { SignInCheck } from './signin/sign-in-check.js';

export type { ProviderVerdict, SignInVia } from './request/request-context.js';

/*
 * What a way in (a method of proving who you are) registers with the Auth.js wing, which mounts
 * whatever is registered without knowing which method it is: its checks after a right password
 * and the sign-in challenge their refusals open, its own routes under /api/auth, and its hooks
 * on Auth.js's answers. The ways in live in the account wing's folders, listed once in its
 * registry (src/account/ways-in.ts).
 */

type Answer = Promise<FastifyReply> | FastifyReply;

/** What the wing lends a way in's route. */
export interface WireKit {
  /** This request's scheme and public origin (AUTH_URL's, else the request's). */
  site(request: FastifyRequest): { secure: boolean; origin: string };
  /** A post's guards (held to this origin, the body checked): the body, as Auth.js takes it. */
  guardPost(request: FastifyRequest): Buffer;
  /** Signs in through Auth.js's credentials callback, checked by `via`. */
  signIn(request: FastifyRequest, reply: FastifyReply, body: Buffer, via: SignInVia): Answer;
  /**
   * Hands the request to Auth.js at its own path: an identity provider's start (a post, held
   * to this origin) or its callback, a sign-in judged by `via.provider`.
   */
  toProvider(request: FastifyRequest, reply: FastifyReply, via?: SignInVia): Answer;
  /** The live session this browser holds (read as every session read is); null: none. */
  heldSession(request: FastifyRequest): Promise<HeldSession | null>;
}

/** A browser's live session, as a way in's route sees it. */
export interface HeldSession {
  userId: string;
  sessionId: string;
}

/** A sign-in that succeeded, for a way in's `afterSignIn`. */
export interface SignedInBrowser {
  request: FastifyRequest;
  userId: string;
  origin: string;
  secure: boolean;
}

/** A route of a way in, at `/api/auth/<action>`. */
export interface WireRoute {
  action: string;
  methods: readonly ('GET' | 'POST')[];
  /** Its posts sign in: held to this origin, not only to this site (login CSRF). */
  signsIn?: true;
  handler(request: FastifyRequest, reply: FastifyReply, kit: WireKit): Answer;
}

/** What a way in adds to the sign-in page for this browser, or 'unavailable' (the store). */
export type SignInPageAddition = Partial<PageView> | 'unavailable' | null;

export interface WayIn {
  /** For the log. */
  id: string;
  /** Its checks after a right password, run in registry order; the first refusal ends it. */
  signInChecks?: readonly SignInCheck[];
  /** The refusal codes after which the browser holds a sign-in challenge, and its purpose. */
  challengeOpenedBy?: Readonly<Record<string, ChallengePurpose>>;
  routes?: readonly WireRoute[];
  /** Entries added to Auth.js's provider list, given the wing's base URL. */
  providers?: (authUrl: string) => Readonly<Record<string, unknown>>;
  /** Auth.js's own providers it adds (identity providers): Auth.js speaks their protocol. */
  authjsProviders?: readonly Provider[];
  /** After any sign-in of a browser succeeds, whichever way in: `Set-Cookie` lines to add. */
  afterSignIn?: (signedIn: SignedInBrowser) => Promise<readonly string[]>;
  /** Auth.js error types its refusals raise: expected outcomes (logged so, and `invalid`). */
  refusalErrors?: readonly string[];
  /**
   * What the sign-in page shows beyond its form, for these query parameters and the sign-in
   * challenge this browser holds; null: nothing.
   */
  signInPage?: (
    request: FastifyRequest,
    params: URLSearchParams,
    challenge: string | undefined,
  ) => Promise<SignInPageAddition>;
}

/** The registered ways in, gathered as the wing mounts them. */
export interface MountedWaysIn {
  checks: readonly SignInCheck[];
  challengeOpenedBy: ReadonlyMap<string, ChallengePurpose>;
  routes: readonly WireRoute[];
  /** Every way in's provider entries, in registry order; undefined when none adds any. */
  providers: ((authUrl: string) => Readonly<Record<string, unknown>>) | undefined;
  refusalErrors: ReadonlySet<string>;
  signInPages: readonly NonNullable<WayIn['signInPage']>[];
  authjsProviders: readonly Provider[];
  afterSignIn: readonly NonNullable<WayIn['afterSignIn']>[];
}

export function mountWaysIn(waysIn: readonly WayIn[]): MountedWaysIn {
  const adders = waysIn.flatMap((wayIn) =>
    wayIn.providers === undefined ? [] : [wayIn.providers],
  );
  return {
    checks: waysIn.flatMap((wayIn) => wayIn.signInChecks ?? []),
    challengeOpenedBy: new Map(
      waysIn.flatMap((wayIn) => Object.entries(wayIn.challengeOpenedBy ?? {})),
    ),
    routes: waysIn.flatMap((wayIn) => wayIn.routes ?? []),
    providers:
      adders.length === 0
        ? undefined
        : (authUrl) =>
            Object.assign({}, ...adders.map((add) => add(authUrl))) as Record<string, unknown>,
    refusalErrors: new Set(waysIn.flatMap((wayIn) => wayIn.refusalErrors ?? [])),
    signInPages: waysIn.flatMap((wayIn) =>
      wayIn.signInPage === undefined ? [] : [wayIn.signInPage],
    ),
    authjsProviders: waysIn.flatMap((wayIn) => wayIn.authjsProviders ?? []),
    afterSignIn: waysIn.flatMap((wayIn) =>
      wayIn.afterSignIn === undefined ? [] : [wayIn.afterSignIn],
    ),
  };
}
