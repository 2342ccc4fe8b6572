// The one error type of the service: everything that fails throws ApiError (anything else becomes a 500
// without details). It carries the code, status and parameter of the error envelope but knows nothing of
// HTTP rendering, so the services, the engine and the Durable Objects throw it without importing an
// adapter; src/http/errors.ts turns it into the response.

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'plan_upgrade_required'
  | 'email_unverified'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unprocessable_image'
  | 'image_too_large'
  | 'rate_limit_exceeded'
  | 'quota_exceeded'
  | 'fetch_failed'
  | 'overloaded'
  | 'internal_error';

export const ERROR_STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  plan_upgrade_required: 403,
  email_unverified: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable_image: 422,
  image_too_large: 422,
  rate_limit_exceeded: 429,
  quota_exceeded: 429,
  fetch_failed: 502,
  overloaded: 503,
  internal_error: 500,
};

export interface ErrorOptions {
  param?: string;
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message);
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.param = options.param;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

interface Issue {
  path: PropertyKey[];
  message: string;
  code?: string;
  keys?: string[];
}

/** A parameter or form part sent more than once: refused rather than one of them picked. */
export function givenTwice(name: string): ApiError {
  return new ApiError('bad_request', `${name} must be given once`, { param: name });
}

/** A failed schema check as the 400 it becomes, naming the parameter at fault. */
export function badRequestFrom(issues: readonly Issue[]): ApiError {
  const first = issues[0];
  // An unknown parameter is reported at the object's level; the parameter at fault is the unknown key.
  if (first?.code === 'unrecognized_keys' && first.keys?.[0] !== undefined) {
    return new ApiError('bad_request', first.message, { param: first.keys[0] });
  }
  const param = first && first.path.length > 0 ? first.path.map(String).join('.') : undefined;
  const message = first ? (param ? `${param} ${first.message}` : first.message) : 'invalid request';
  return new ApiError('bad_request', message, param ? { param } : {});
}
