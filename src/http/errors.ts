/** The one catalogue of errors Gatehouse answers itself (Auth.js's own answers stay Auth.js's). */
export const errorCatalogue = {
  bad_request: { status: 400, message: 'The request is malformed.' },
  cross_site: {
    status: 403,
    message: 'Cross-site requests cannot sign in or out.',
  },
  not_found: { status: 404, message: 'No such route.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this route.' },
  request_timeout: { status: 408, message: 'The request did not arrive in time.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: {
    status: 415,
    message: 'Send application/x-www-form-urlencoded or application/json.',
  },
  rate_limited: {
    status: 429,
    message: 'Too many requests from your address; retry after the time given.',
  },
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
  // The account routes (src/account/, accounts spec).
  invalid_token: {
    status: 400,
    message: 'This link or code is not valid: it may have expired or been used already.',
  },
  invalid_code: { status: 400, message: 'This code is not right, or was used already.' },
  unauthenticated: { status: 401, message: 'Sign in first.' },
  second_factor_required: {
    status: 401,
    message: 'This account has two-step sign-in: send a code of its app (otp) or a recovery code.',
  },
  reauthentication_required: {
    status: 401,
    message: 'Confirm your password again to do this.',
  },
  csrf: {
    status: 403,
    message: 'The request did not come from this site, or its CSRF token was missing or wrong.',
  },
  invalid_credentials: { status: 403, message: 'The password is not correct.' },
  second_factor_invalid: {
    status: 403,
    message: 'The code is not right, or was used already.',
  },
  signup_closed: { status: 403, message: 'This service does not take sign-ups.' },
  // The admin API (src/admin/): the target is not in a state that allows the call.
  conflict: { status: 409, message: 'This cannot be done in the current state.' },
  // SECOND_FACTOR=required: the account's last second factor cannot be removed.
  last_second_factor: {
    status: 409,
    message:
      'Every account here needs a second factor: add another (an authenticator app or a passkey) before removing this one.',
  },
  invalid_field: { status: 422, message: 'A field is missing or not valid.' },
  weak_password: { status: 422, message: 'The new password is not acceptable.' },
  internal_error: { status: 500, message: 'Something went wrong on our side.' },
  overloaded: { status: 503, message: 'The service is busy; retry shortly.' },
  unavailable: { status: 503, message: 'The service cannot reach its database; retry shortly.' },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

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
