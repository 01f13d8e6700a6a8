/** Each code's HTTP status. */
const statuses = {
  bad_request: 400,
  cross_site: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  headers_too_large: 431,
  invalid_token: 400,
  invalid_code: 400,
  unauthenticated: 401,
  second_factor_required: 401,
  reauthentication_required: 401,
  csrf: 403,
  invalid_credentials: 403,
  second_factor_invalid: 403,
  signup_closed: 403,
  conflict: 409,
  last_second_factor: 409,
  last_sign_in_method: 409,
  invalid_field: 422,
  weak_password: 422,
  internal_error: 500,
  overloaded: 503,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof statuses;

/** Each code's safe public message. */
const messages: Record<ErrorCode, string> = {
  bad_request: 'The request is malformed.',
  cross_site: 'Cross-site requests cannot sign in or out.',
  not_found: 'No such route.',
  method_not_allowed: 'This method is not allowed on this route.',
  request_timeout: 'The request did not arrive in time.',
  payload_too_large: 'The request body is too large.',
  unsupported_media_type: 'Send application/x-www-form-urlencoded or application/json.',
  rate_limited: 'Too many requests from your address; retry after the time given.',
  headers_too_large: 'The request headers are too large.',
  // The account routes (src/account/, accounts spec).
  invalid_token: 'This link or code is not valid: it may have expired or been used already.',
  invalid_code: 'This code is not right, or was used already.',
  unauthenticated: 'Sign in first.',
  // Shown by apps' own forms as it is (the guides' examples): words for the person, not the API.
  second_factor_required:
    'Your account has two-step sign-in: enter the code your authenticator app shows, or a recovery code.',
  reauthentication_required: 'Confirm your password again to do this.',
  csrf: 'The request did not come from this site, or its CSRF token was missing or wrong.',
  invalid_credentials: 'The password is not correct.',
  second_factor_invalid:
    'That code is not right, or was used already: try the next one your app shows.',
  signup_closed: 'This service does not take sign-ups.',
  // The admin API (src/admin/): the target is not in a state that allows the call.
  conflict: 'This cannot be done in the current state.',
  // SECOND_FACTOR=required: the account's last second factor cannot be removed.
  last_second_factor:
    'Every account here needs a second factor: add another (an authenticator app or a passkey) before removing this one.',
  // An identity's unlink would leave the account no way to sign in.
  last_sign_in_method:
    'This is the only way left to sign in to this account: set a password (or add a passkey or another provider) before removing it.',
  invalid_field: 'A field is missing or not valid.',
  weak_password: 'The new password is not acceptable.',
  internal_error: 'Something went wrong on our side.',
  overloaded: 'The service is busy; retry shortly.',
  unavailable: 'The service cannot reach its database; retry shortly.',
};

/**
 * The one catalogue of errors Gatehouse answers itself (Auth.js's own answers stay Auth.js's):
 * each code's status and message, kept as two tables so each reads as a column.
 */
export const errorCatalogue = Object.fromEntries(
  (Object.keys(statuses) as ErrorCode[]).map((code) => [
    code,
    { status: statuses[code], message: messages[code] },
  ]),
) as {
  readonly [C in ErrorCode]: { readonly status: (typeof statuses)[C]; readonly message: string };
};

export interface ErrorBody {
  error: { code: ErrorCode; message: string; requestId?: string };
}

/**
 * What a refusal is about, for a page that words it: the field at fault, and a stable reason
 * where one code covers several cases. Pages key their words on these, never on the message.
 */
export interface Refused {
  field?: string;
  reason?: string;
}

/** An expected failure that renders itself through the final error handler. */
export class HttpError extends Error {
  readonly status: number;
  readonly field: string | undefined;
  readonly reason: string | undefined;
  constructor(
    readonly code: ErrorCode,
    readonly headers: Record<string, string> = {},
    readonly detail?: string,
    about: Refused = {},
  ) {
    super(detail ?? errorCatalogue[code].message);
    this.name = 'HttpError';
    this.status = errorCatalogue[code].status;
    this.field = about.field;
    this.reason = about.reason;
  }
}

/** 422 `invalid_field` naming its field, in the API's words. */
export const invalidField = (field: string, detail?: string, reason?: string) =>
  new HttpError('invalid_field', {}, detail ?? `Field ${field} is missing or not valid.`, {
    field,
    ...(reason !== undefined && { reason }),
  });

export function errorBody(code: ErrorCode, requestId?: string, detail?: string): ErrorBody {
  return {
    error: {
      code,
      message: detail ?? errorCatalogue[code].message,
      ...(requestId !== undefined && { requestId }),
    },
  };
}
